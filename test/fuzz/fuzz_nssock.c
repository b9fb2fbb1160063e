/* Fuzz target: what verify reads to find a pod's held packet, raw and XDP
 * sockets (node/nssock.c). The /proc/net lines come from the kernel, but a
 * maps line ends with a path of the pod's choosing and an io_uring's
 * fdinfo lists files it registered: every parser takes every input, and
 * whatever it accepts must be what it says (an inode, never 0). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/nssock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ng_nssock k;
	enum ng_sock_kind kind;
	uint64_t ino;
	long count;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (int kd = 0; kd < NG_SOCK_KINDS; kd++)
		if (ng_sock_parse_line((enum ng_sock_kind)kd, text, &k) == 1 &&
		    (k.ino == 0 || k.kind != (enum ng_sock_kind)kd))
			abort();
	if (ng_sock_parse_protocols_line(text, &kind, &count) == 1 && (count < 0 || kind >= NG_SOCK_KINDS))
		abort();
	if (ng_sock_link_inode(text, &ino) == 0 && ino == 0)
		abort();
	if (ng_sock_maps_line(text, &ino) == 1 && ino == 0)
		abort();
	if (ng_sock_uring_line(text, &ino) == 1 && ino == 0)
		abort();
	if (ng_sock_kind_of_protoname(text, size) >= NG_SOCK_KINDS)
		abort();
	/* A reply message as ng_nl_dump hands it over: whole, aligned. */
	if (size >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr *nlh = aligned_alloc(8, (size + 7) & ~(size_t)7);

		if (nlh) {
			memcpy(nlh, data, size);
			if (nlh->nlmsg_len >= sizeof(*nlh) && nlh->nlmsg_len <= size &&
			    ng_sock_parse_xdp_diag(nlh, &k) == 0 && k.ino == 0)
				abort();
			free(nlh);
		}
	}
	free(text);
	return 0;
}
