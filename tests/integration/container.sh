# Shared by the scripts that boot ccxd in a container: Debian 12 under
# systemd-nspawn, over a debootstrap'd rootfs cached in
# $CCXD_TEST_NSPAWN_CACHE (default /var/cache/ccxd-test; building it takes
# about a minute and needs the Debian mirror), an overlay keeping the cache
# clean. Sourced after lib.sh: the script skips (exit 77) where the
# container cannot run here; it leaves the root mounted at $ROOT, and
# boot_container boots it (ns runs a command in it, stop_machine stops it,
# at exit too).

CACHE=${CCXD_TEST_NSPAWN_CACHE:-/var/cache/ccxd-test}
MIRROR=${CCXD_TEST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# systemd itself, what ccxd links against, and man-db for systemd-analyze
# verify's check of Documentation=.
PACKAGES=systemd,systemd-sysv,dbus,man-db,libnl-3-200,libhwloc15,libinih1,libjson-c5,libbpf1
ROOTFS=$CACHE/$SUITE
STAMP=$ROOTFS/.ccxd-rootfs
ROOT=$WORK/root
MACHINE=ccxd-test-$$
NSPAWN=
LEADER=

# The container's Debian has no sanitizer runtimes for such a build to load.
if ldd "$CCXD" 2>/dev/null | grep -q 'libasan\|libubsan'; then
	echo "ccxd is built with sanitizers (SANITIZE=), which the container cannot run"
	exit 77
fi
for tool in systemd-nspawn debootstrap nsenter flock; do
	command -v "$tool" >/dev/null || { echo "$tool is missing (tools/install-deps installs it)"; exit 77; }
done

# ---- the cached rootfs ------------------------------------------------------

rootfs_current() { [ "$(cat "$STAMP" 2>/dev/null)" = "$SUITE $PACKAGES" ]; }

build_rootfs() {
	avail=$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')
	[ "${avail:-0}" -ge 1048576 ] || { echo "less than 1 GiB free in $CACHE for the Debian rootfs"; exit 77; }
	timeout 15 wget -q -O /dev/null "$MIRROR/dists/$SUITE/Release" ||
		{ echo "no cached rootfs in $CACHE and the Debian mirror $MIRROR is not reachable"; exit 77; }
	rm -rf "$ROOTFS.new"
	echo "# building the Debian $SUITE rootfs in $ROOTFS (once)"
	if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS.new" "$MIRROR" \
		>"$CACHE/debootstrap.log" 2>&1; then
		rm -rf "$ROOTFS.new"
		echo "debootstrap failed: $(grep -m1 '^E:' "$CACHE/debootstrap.log" || tail -n 1 "$CACHE/debootstrap.log")"
		exit 77
	fi
	echo "$SUITE $PACKAGES" > "$ROOTFS.new/.ccxd-rootfs"
	rm -rf "$ROOTFS"
	mv "$ROOTFS.new" "$ROOTFS"
}

mkdir -p "$CACHE" || { echo "cannot create $CACHE"; exit 77; }
# Shared while a test boots from the rootfs, exclusive while it is built:
# runs from other checkouts wait rather than pull it from under each other.
exec 9>"$CACHE/lock"
flock -s 9
if ! rootfs_current; then
	flock -x 9
	rootfs_current || build_rootfs
	flock -s 9
fi

# ---- the container ------------------------------------------------------------

ns() { nsenter -t "$LEADER" -a "$@" </dev/null; }

stop_machine() {
	if [ -n "$NSPAWN" ] && kill -0 "$NSPAWN" 2>/dev/null; then
		# nspawn turns SIGTERM into an orderly poweroff of the container.
		sig TERM "$NSPAWN"
		wait_for 15 sh -c "! kill -0 $NSPAWN 2>/dev/null" || sig KILL "$NSPAWN" "$LEADER" 2>/dev/null
		wait_for 5 sh -c "! kill -0 $NSPAWN 2>/dev/null"
	fi
	if mountpoint -q "$ROOT"; then
		umount "$ROOT" 2>/dev/null || umount -l "$ROOT"
	fi
}
ON_EXIT=stop_machine

# The container's root: an overlay over the cached rootfs, which stays clean.
mount_root() {
	mkdir -p "$WORK/upper" "$WORK/overlay-work" "$ROOT"
	mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$WORK/upper,workdir=$WORK/overlay-work" "$ROOT"
}
mount_root || { echo "cannot mount an overlay over $ROOTFS"; exit 77; }

# Not our child (the subshell exits): lib.sh's cleanup waits for every
# child, and the machine must be stopped in order, by stop_machine.
leader_found() {
	LEADER=$(pgrep -P "$NSPAWN" -x systemd | head -n 1)
	[ -n "$LEADER" ]
}
boot() {
	# CAP_BPF, CAP_PERFMON and bpf(2), which nspawn does not give a
	# container by default, as a host would: the unit as installed must let
	# ccxd load its task iterators, and its probe worker drop everything.
	(systemd-nspawn -q -D "$ROOT" -M "$MACHINE" --register=no --keep-unit -b --console=passive \
		--capability=CAP_BPF,CAP_PERFMON --system-call-filter=bpf \
		</dev/null >"$WORK/console.log" 2>&1 & echo $! > "$WORK/nspawn.pid")
	NSPAWN=$(cat "$WORK/nspawn.pid")
	wait_for 10 leader_found || return 1
	# Until systemd has its bus socket, systemctl cannot even ask; on a busy
	# machine that takes a while.
	wait_for 30 sh -c "[ -n \"\$(nsenter -t $LEADER -a systemctl is-system-running </dev/null 2>/dev/null)\" ]"
	state=$(timeout 60 nsenter -t "$LEADER" -a systemctl is-system-running --wait </dev/null 2>&1)
	[ "$state" = running ]
}
# boot_container: a container whose systemd never comes up says nothing
# about ccxd: boot once more, and if it still does not, say why and skip.
boot_container() {
	if ! boot; then
		echo "# first boot: state '$state'; console:"
		tail -n 20 "$WORK/console.log" | sed 's/^/#   /'
		stop_machine
		mount_root
		if ! boot; then
			echo "# second boot: state '$state'; console:"
			tail -n 20 "$WORK/console.log" | sed 's/^/#   /'
			stop_machine
			ON_EXIT=:
			echo "the container's systemd did not come up twice (state: $state)"
			exit 77
		fi
	fi
	ok "the container's systemd runs (state $state)"
}
