# shellcheck shell=bash
# e2e/k8s/images.sh: the one image every pod of the cluster runs, built on
# the spot and imported into containerd (sourced by e2e/k8s/cluster.sh).
#
# No registry can be reached, so nothing is ever pulled: containerd's
# sandbox_image and every pod (imagePullPolicy: Never) name $KC_IMAGE, a
# docker-archive tar made by mkimage.py holding the static pause of
# e2e/cri/pause.c (the entrypoint), busybox-static with a link per applet,
# and the cluster's own kubectl (static, CGO off) so that a pod can be an
# in-cluster API client, and Debian's curl with the shared libraries ldd
# names, at the paths ldd names (the seed's checks are curl commands; busybox
# has none). KC_IMAGE_TAGS names more references for the same image (for
# manifests that name another image, e.g. a kubectl image).

# _kc_ldd_items BINARY: DEST=SRC items for BINARY's libraries and loader.
_kc_ldd_items() {
	ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 "=" $3 } $1 ~ /^\// { print $1 "=" $1 }'
}

kc_image_up() {
	local items=() a
	"${CC:-cc}" -static -O2 -o "$KC_T/pause" "$KC_ROOT/e2e/cri/pause.c" || return 1
	items+=("/pause=$KC_T/pause" "/bin/busybox=$(command -v busybox)" "/bin/kubectl=$KC_BIN/kubectl")
	for a in $(busybox --list); do
		case $a in busybox | kubectl | curl) ;; *) items+=("/bin/$a@busybox") ;; esac
	done
	items+=("/bin/curl=$(command -v curl)")
	mapfile -t -O "${#items[@]}" items < <(_kc_ldd_items "$(command -v curl)")
	case "${items[*]}" in *libcurl.so*ld-linux* | *ld-linux*libcurl.so*) ;; *) echo "ldd named no libcurl/loader" && return 1 ;; esac
	/usr/bin/python3 "$KC_HERE/mkimage.py" "$KC_T/image.tar" "$KC_IMAGE" /pause "${items[@]}" || return 1
	ctr --address "$KC_SOCK" -n k8s.io images import "$KC_T/image.tar" >/dev/null || return 1
	rm -f "$KC_T/image.tar"
	for a in ${KC_IMAGE_TAGS:-}; do
		ctr --address "$KC_SOCK" -n k8s.io images tag --force "$KC_IMAGE" "$a" >/dev/null || return 1
	done
}

# kc_image_dockerfile DOCKERFILE REF: the image DOCKERFILE's final stage
# describes (dockerimage.py: FROM scratch, the files its COPY --from names,
# as this machine's build made them), imported as REF.
kc_image_dockerfile() {
	/usr/bin/python3 "$KC_HERE/dockerimage.py" "$1" "$KC_ROOT" "$KC_T/dockerfile.tar" "$2" &&
		ctr --address "$KC_SOCK" -n k8s.io images import "$KC_T/dockerfile.tar" >/dev/null &&
		rm -f "$KC_T/dockerfile.tar"
}
