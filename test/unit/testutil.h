/* shared test helpers (filled in with the tests) */
#ifndef TESTUTIL_H
#define TESTUTIL_H
#endif
