/* The packet, raw and XDP sockets of a pod's namespace and who holds them
 * (verify's "no process can bypass it" row): the kernel's /proc/net lines,
 * /proc/net/protocols, sock_diag's AF_XDP replies, fd links, maps and
 * io_uring fdinfo lines, protocol names, and the text verify prints. The
 * samples are what Linux 6.1 and 6.18 print; every malformed form is
 * refused, never read as "no socket". */
#include "testutil.h"

#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <sys/socket.h>

#include "node/nssock.h"

#define PACKET_HEADER "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n"
#define RAW_HEADER                                                                                          \
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode " \
	"ref pointer drops\n"
#define RAW6_HEADER                                                                                      \
	"  sl  local_address                         remote_address                        st tx_queue " \
	"rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"

static void test_packet_lines(void **state)
{
	(void)state;
	struct ng_nssock k = {0};

	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, PACKET_HEADER, &k), 0);
	/* socket(AF_PACKET, SOCK_RAW, 0): bound to nothing yet, still listed. */
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_PACKET,
				   "00000000257cae8f 2      3    0000   0     0 0      0      552317\n", &k),
		1);
	assert_true(k.ino == 552317 && k.kind == NG_SOCK_PACKET && k.proto == 0);
	/* SOCK_DGRAM, ETH_P_ALL, running, as uid 65534; no newline. */
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET,
					    "ffff8881046c2000 3      2    0003   2     1 0      65534  18",
					    &k),
			 1);
	assert_true(k.ino == 18 && k.proto == 3);
	/* Malformed: a column missing or extra, not numbers, inode 0, R
	 * neither 0 nor 1, a protocol of another width, an empty line. */
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00000000257cae8f 2 3 0000 0 0 0 0\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00000000257cae8f 2 3 0000 0 0 0 0 5 6\n", &k),
			 -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "zz 2 3 0000 0 0 0 0 5\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00 2 3 0000 0 0 0 0 0\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00 2 3 0000 0 0 0 0 12a\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00 2 3 0000 0 2 0 0 12\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00 2 3 00003 0 1 0 0 12\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "00 -2 3 0003 0 1 0 0 12\n", &k), -1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_PACKET, "00 2 3 0003 0 1 0 0 99999999999999999999999\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "\n", &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, "", &k), -1);
	/* A raw line is not a packet line, nor the other way round. */
	assert_int_equal(ng_sock_parse_line(NG_SOCK_PACKET, RAW_HEADER, &k), -1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_RAW, PACKET_HEADER, &k), -1);
	/* Not a list this parser reads. */
	assert_int_equal(ng_sock_parse_line(NG_SOCK_XDP, PACKET_HEADER, &k), -1);
}

static void test_raw_lines(void **state)
{
	(void)state;
	struct ng_nssock k = {0};

	assert_int_equal(ng_sock_parse_line(NG_SOCK_RAW, RAW_HEADER, &k), 0);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_RAW6, RAW6_HEADER, &k), 0);
	/* IPPROTO_RAW (255) and ICMP (1): the "port" is the protocol. */
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0\n",
				   &k),
		1);
	assert_true(k.ino == 552313 && k.kind == NG_SOCK_RAW && k.proto == 255);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   "   1: 0100007F:0001 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000 65534        0 7 2 0000000000000000 3",
				   &k),
		1);
	assert_true(k.ino == 7 && k.proto == 1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW6,
				   "   58: 00000000000000000000000000000000:003A "
				   "00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552316 2 0000000097febe1f 0\n",
				   &k),
		1);
	assert_true(k.ino == 552316 && k.kind == NG_SOCK_RAW6 && k.proto == 58);
	/* An IPv4 line in raw6 (and the other way round): the address width. */
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW6,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   "   58: 00000000000000000000000000000000:003A "
				   "00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552316 2 0000000097febe1f 0\n",
				   &k),
		-1);
	/* A column missing (no drops) or one more; inode 0 or not a number; a
	 * protocol past 255; a slot without its colon; a queue without one. */
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0 9\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 0 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 55x 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:0100 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114 00000000:00FF 00000000:0000 07 00000000:00000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(
		ng_sock_parse_line(NG_SOCK_RAW,
				   " 114: 00000000:00FF 00000000:0000 07 0000000000000000 00:00000000 "
				   "00000000     0        0 552313 2 00000000f6b85e02 0\n",
				   &k),
		-1);
	assert_int_equal(ng_sock_parse_line(NG_SOCK_RAW, " : \n", &k), -1);
}

static void test_protocols(void **state)
{
	(void)state;
	enum ng_sock_kind kind = NG_SOCK_PACKET;
	long n = -1;

	assert_int_equal(
		ng_sock_parse_protocols_line("protocol  size sockets  memory press maxhdr  slab module     "
					     "cl co di\n",
					     &kind, &n),
		0);
	assert_int_equal(
		ng_sock_parse_protocols_line("XDP       1088      2      -1   NI       0   no   kernel      "
					     "n  n  n\n",
					     &kind, &n),
		1);
	assert_true(kind == NG_SOCK_XDP && n == 2);
	assert_int_equal(ng_sock_parse_protocols_line("RAWv6     1344      0      -1   NI", &kind, &n), 1);
	assert_true(kind == NG_SOCK_RAW6 && n == 0);
	assert_int_equal(ng_sock_parse_protocols_line("PACKET    1600      5      -1", &kind, &n), 1);
	assert_true(kind == NG_SOCK_PACKET && n == 5);
	/* Other protocols (ping sockets are not raw ones), and blank lines. */
	assert_int_equal(ng_sock_parse_protocols_line("PING      1016      3      -1   NI", &kind, &n), 0);
	assert_int_equal(ng_sock_parse_protocols_line("UNIX-STREAM 1152      2      -1", &kind, &n), 0);
	assert_int_equal(ng_sock_parse_protocols_line("XDPX      1088      2", &kind, &n), 0);
	assert_int_equal(ng_sock_parse_protocols_line("\n", &kind, &n), 0);
	/* One of ours without a number of sockets. */
	assert_int_equal(ng_sock_parse_protocols_line("XDP       1088      x      -1", &kind, &n), -1);
	assert_int_equal(ng_sock_parse_protocols_line("XDP       1088", &kind, &n), -1);
	assert_int_equal(ng_sock_parse_protocols_line("RAW       1152      -1", &kind, &n), -1);
	assert_int_equal(ng_sock_parse_protocols_line("RAW       1152      99999999999", &kind, &n), -1);
}

/* A reply message as the kernel frames it: header, xdp_diag_msg, then an
 * attribute we do not read. */
struct xdp_reply {
	struct nlmsghdr h;
	struct xdp_diag_msg m;
	unsigned char attr[8];
};

static struct xdp_reply xdp_reply(uint8_t family, uint32_t ino)
{
	struct xdp_reply r;

	memset(&r, 0, sizeof(r));
	r.h.nlmsg_len = sizeof(r);
	r.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r.m.xdiag_family = family;
	r.m.xdiag_type = SOCK_RAW;
	r.m.xdiag_ino = ino;
	return r;
}

static void test_xdp_diag(void **state)
{
	(void)state;
	struct ng_nssock k = {0};
	struct xdp_reply r = xdp_reply(44, 9001);

	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), 0);
	assert_true(k.ino == 9001 && k.kind == NG_SOCK_XDP && k.proto == -1);
	/* Exactly the header, no attribute: still one. */
	r.h.nlmsg_len = NLMSG_LENGTH(sizeof(r.m));
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), 0);
	/* Shorter than the header. */
	r.h.nlmsg_len = NLMSG_LENGTH(sizeof(r.m)) - 1;
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
	r.h.nlmsg_len = NLMSG_HDRLEN;
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
	/* Another type (an error, DONE), another family, inode 0. */
	r = xdp_reply(44, 9001);
	r.h.nlmsg_type = NLMSG_ERROR;
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
	r.h.nlmsg_type = NLMSG_DONE;
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
	r = xdp_reply(AF_PACKET, 9001);
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
	r = xdp_reply(44, 0);
	assert_int_equal(ng_sock_parse_xdp_diag(&r.h, &k), -1);
}

static void test_links(void **state)
{
	(void)state;
	uint64_t ino = 0;

	assert_int_equal(ng_sock_link_inode("socket:[552317]", &ino), 0);
	assert_true(ino == 552317);
	assert_int_equal(ng_sock_link_inode("socket:[4294967296]", &ino), 0);
	assert_true(ino == 4294967296ULL);
	assert_int_equal(ng_sock_link_inode("socket:[]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[0]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[12a]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[12]x", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[12", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[-12]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("socket:[99999999999999999999999]", &ino), -1);
	/* A file some process named so is a path, never a socket. */
	assert_int_equal(ng_sock_link_inode("/tmp/socket:[552317]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("anon_inode:[eventpoll]", &ino), -1);
	assert_int_equal(ng_sock_link_inode("", &ino), -1);
}

static void test_maps(void **state)
{
	(void)state;
	uint64_t ino = 0;

	/* A packet socket's RX ring, its fd closed. */
	assert_int_equal(
		ng_sock_maps_line("7fe978211000-7fe978212000 rw-s 00000000 00:09 572930                     "
				  "socket:[572930]\n",
				  &ino),
		1);
	assert_true(ino == 572930);
	/* A file named socket:[N]: its inode is not N. */
	assert_int_equal(
		ng_sock_maps_line("7fe978211000-7fe978212000 rw-s 00000000 fe:00 21528 socket:[572930]\n",
				  &ino),
		0);
	assert_int_equal(
		ng_sock_maps_line(
			"7fe978211000-7fe978212000 rw-s 00000000 fe:00 572930 /tmp/socket:[572930]\n", &ino),
		0);
	/* Ordinary mappings: a library, a path with spaces, anonymous. */
	assert_int_equal(ng_sock_maps_line(
				 "7fe9773ad000-7fe9773b1000 r--p 00000000 fe:00 21528 /usr/lib/x.so\n", &ino),
			 0);
	assert_int_equal(
		ng_sock_maps_line("7fe9773ad000-7fe9773b1000 r--p 00000000 fe:00 21528 /tmp/a b (deleted)\n",
				  &ino),
		0);
	assert_int_equal(
		ng_sock_maps_line("7ffd3c1d6000-7ffd3c1f7000 rw-p 00000000 00:00 0                          "
				  "[stack]\n",
				  &ino),
		0);
	assert_int_equal(ng_sock_maps_line("55b28f51f000-55b28f520000 rw-p 00000000 00:00 0\n", &ino), 0);
	/* Malformed. */
	assert_int_equal(ng_sock_maps_line("55b28f51f000-55b28f520000 rw-p 00000000\n", &ino), -1);
	assert_int_equal(ng_sock_maps_line("55b28f51f000 rw-p 00000000 00:00 0\n", &ino), -1);
	assert_int_equal(ng_sock_maps_line("55b28f51f000-55b28f520000 rw-p 00000000 0000 0\n", &ino), -1);
	assert_int_equal(ng_sock_maps_line("55b28f51f000-55b28f520000 rwxps 00000000 00:00 0\n", &ino), -1);
	assert_int_equal(ng_sock_maps_line("", &ino), -1);
}

static void test_uring(void **state)
{
	(void)state;
	uint64_t ino = 0;

	assert_int_equal(ng_sock_uring_line("    0: socket:[7711]\n", &ino), 1);
	assert_true(ino == 7711);
	assert_int_equal(ng_sock_uring_line("12345: socket:[7]", &ino), 1);
	assert_true(ino == 7);
	assert_int_equal(ng_sock_uring_line("UserFiles:\t2\n", &ino), 0);
	assert_int_equal(ng_sock_uring_line("    1: /tmp/socket:[7711]\n", &ino), 0);
	assert_int_equal(ng_sock_uring_line("    1: anon_inode:[eventfd]\n", &ino), 0);
	assert_int_equal(ng_sock_uring_line("    1:socket:[7711]\n", &ino), 0);
	assert_int_equal(ng_sock_uring_line(": socket:[7711]\n", &ino), 0);
	assert_int_equal(ng_sock_uring_line("", &ino), 0);
}

static void test_protoname(void **state)
{
	(void)state;

	/* As getxattr returns them: with the NUL. */
	assert_int_equal(ng_sock_kind_of_protoname("PACKET", 7), NG_SOCK_PACKET);
	assert_int_equal(ng_sock_kind_of_protoname("RAW", 4), NG_SOCK_RAW);
	assert_int_equal(ng_sock_kind_of_protoname("RAWv6", 6), NG_SOCK_RAW6);
	assert_int_equal(ng_sock_kind_of_protoname("XDP", 4), NG_SOCK_XDP);
	assert_int_equal(ng_sock_kind_of_protoname("XDP", 3), NG_SOCK_XDP);
	/* Ping sockets, and everything else, are not. */
	assert_int_equal(ng_sock_kind_of_protoname("PING", 5), -1);
	assert_int_equal(ng_sock_kind_of_protoname("PINGv6", 7), -1);
	assert_int_equal(ng_sock_kind_of_protoname("UDP", 4), -1);
	assert_int_equal(ng_sock_kind_of_protoname("TCP", 4), -1);
	assert_int_equal(ng_sock_kind_of_protoname("NETLINK", 8), -1);
	assert_int_equal(ng_sock_kind_of_protoname("RAWv", 5), -1);
	assert_int_equal(ng_sock_kind_of_protoname("RAWv6x", 7), -1);
	assert_int_equal(ng_sock_kind_of_protoname("", 1), -1);
	assert_int_equal(ng_sock_kind_of_protoname("", 0), -1);
}

static void test_find(void **state)
{
	(void)state;
	ng_nssock_vec v = {0};
	const uint64_t inos[] = {900, 3, 77, 4294967297ULL, 12};

	assert_null(ng_nssock_find(&v, 3));
	for (size_t i = 0; i < sizeof(inos) / sizeof(inos[0]); i++) {
		struct ng_nssock k = {.ino = inos[i], .kind = (enum ng_sock_kind)(i % NG_SOCK_KINDS)};

		assert_int_equal(ng_vec_push(&v, &k), 0);
	}
	ng_nssock_sort(&v);
	for (size_t i = 1; i < v.n; i++)
		assert_true(v.v[i - 1].ino < v.v[i].ino);
	for (size_t i = 0; i < sizeof(inos) / sizeof(inos[0]); i++) {
		const struct ng_nssock *k = ng_nssock_find(&v, inos[i]);

		assert_non_null(k);
		assert_true(k->ino == inos[i] && k->kind == (enum ng_sock_kind)(i % NG_SOCK_KINDS));
	}
	assert_null(ng_nssock_find(&v, 4));
	assert_null(ng_nssock_find(&v, 1));
	assert_null(ng_nssock_find(&v, 5000000000ULL));
	ng_vec_free(&v);
}

static void push_holder(struct ng_sockholders *h, int pid, const char *name, enum ng_sock_kind kind,
			int proto, enum ng_hold how, bool in_ns, bool listed)
{
	struct ng_sockholder x = {.pid = pid,
				  .sock = {.ino = (uint64_t)pid * 10, .kind = kind, .proto = proto},
				  .how = how,
				  .in_ns = in_ns,
				  .listed = listed};

	snprintf(x.name, sizeof(x.name), "%s", name);
	assert_int_equal(ng_vec_push(&h->v, &x), 0);
}

static void test_describe(void **state)
{
	(void)state;
	struct ng_sockholders h = {0};
	ng_nssock_vec socks = {0};
	char buf[400];

	push_holder(&h, 4711, "sockhold", NG_SOCK_PACKET, 3, NG_HOLD_FD, true, true);
	push_holder(&h, 4712, "sleep", NG_SOCK_RAW6, 58, NG_HOLD_FD, false, true);
	push_holder(&h, 4713, "x", NG_SOCK_RAW, -1, NG_HOLD_FD, true, false);
	push_holder(&h, 4714, "pause", NG_SOCK_XDP, -1, NG_HOLD_MAPPED, true, true);
	ng_sock_describe_holders(&h, 4714, buf, sizeof(buf));
	assert_string_equal(
		buf, "4711 (sockhold: packet), 4712 (sleep: raw6 protocol 58, outside the pod's "
		     "namespace), 4713 (x: raw, not listed by the namespace), 4714 (pause: xdp, mapped, "
		     "the --sandbox-pid)");
	/* Bounded: what does not fit is counted, never cut in the middle. */
	ng_sock_describe_holders(&h, 0, buf, 80);
	assert_true(strlen(buf) < 80);
	assert_string_equal(buf, "4711 (sockhold: packet), and 3 more");
	h.more = 5;
	ng_sock_describe_holders(&h, 0, buf, 80);
	assert_string_equal(buf, "4711 (sockhold: packet), and 8 more");
	ng_sock_describe_holders(&h, 0, buf, 20);
	assert_true(strlen(buf) < 20);
	assert_string_equal(buf, "and 9 more"); /* all 4 and the 5 not kept */
	ng_sock_describe_holders(&h, 0, buf, 1);
	assert_string_equal(buf, "");
	ng_sock_describe_holders(&h, 0, buf, 0); /* writes nothing */
	ng_vec_free(&h.v);
	ng_sock_describe_holders(&h, 0, buf, sizeof(buf));
	assert_string_equal(buf, "and 5 more"); /* none kept, 5 found */
	h.more = 0;
	ng_sock_describe_holders(&h, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");

	assert_int_equal(ng_vec_push(&socks, (&(struct ng_nssock){.ino = 5555, .kind = NG_SOCK_PACKET})), 0);
	assert_int_equal(ng_vec_push(&socks, (&(struct ng_nssock){.ino = 6, .kind = NG_SOCK_XDP})), 0);
	ng_sock_describe_socks(&socks, buf, sizeof(buf));
	assert_string_equal(buf, "packet socket:[5555], xdp socket:[6]");
	ng_sock_describe_socks(&socks, buf, 50);
	assert_string_equal(buf, "packet socket:[5555], and 1 more");
	ng_vec_free(&socks);
	assert_string_equal(ng_sock_kind_name(NG_SOCK_RAW6), "raw6");
	assert_string_equal(ng_sock_kind_name(NG_SOCK_KINDS), "?");
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packet_lines),
		cmocka_unit_test(test_raw_lines),
		cmocka_unit_test(test_protocols),
		cmocka_unit_test(test_xdp_diag),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_uring),
		cmocka_unit_test(test_protoname),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_describe),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
