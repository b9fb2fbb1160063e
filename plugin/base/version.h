#ifndef NG_VERSION_H
#define NG_VERSION_H
#define NG_VERSION "0.3.0"
#endif
