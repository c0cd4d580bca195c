# The Debian package, as a Debian administrator gets it: built from a copy
# of the tree with dpkg-buildpackage, checked by lintian, installed with
# apt into a Debian 12 container, which then boots: the units run as
# installed, the user comes from the sysusers file, ccxctl answers a member
# of group ccxd. An upgrade keeps an edited /etc/ccxd.conf and offers the
# new one beside it; apt purge stops ccxd, which gives back the affinity it
# set, and leaves none of the package's files.
# limit: 900
. "$(dirname "$0")/lib.sh"
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || { echo "$tool is missing (make check installs it)"; exit 77; }
done
. "$(dirname "$0")/container.sh"

VERSION=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
ARCH=$(dpkg --print-architecture)

# ---- build -------------------------------------------------------------------

# build_deb DIR: the package of the tree in DIR, in DIR's parent. What make
# check was called with (SANITIZE=... in MAKEFLAGS, CI) is not the package's.
build_deb() {
	(cd "$1" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u CI dpkg-buildpackage -us -uc -b) >"$1.log" 2>&1
}
SRC=$WORK/src/ccxd-$VERSION
mkdir -p "$SRC"
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 cp --parents -t "$SRC")
else
	cp -a "$TOP/." "$SRC" && make -s -C "$SRC" clean
fi
DEB=$WORK/src/ccxd_${VERSION}_$ARCH.deb
build_deb "$SRC"
rc=$?
check "dpkg-buildpackage -us -uc -b builds ccxd_${VERSION}_$ARCH.deb" sh -c "[ $rc -eq 0 ] && [ -s '$DEB' ]"
[ -s "$DEB" ] || { tail -n 30 "$SRC.log" | sed 's/^/# /'; exit 1; }
check "with the hardening flags, and no compiler warning" sh -c "
	grep -q -- '-D_FORTIFY_SOURCE=2' '$SRC.log' && grep -q -- '-Wl,-z,now' '$SRC.log' && ! grep -q 'warning:' '$SRC.log'"
# As nobody, from a directory nobody may enter (not the tree's: a clone in
# /root is root's alone).
(cd "$WORK" && runuser -u nobody -- lintian --fail-on error,warning "$DEB") >"$WORK/lintian.log" 2>&1
rc=$?
check "lintian reports no error and no warning" sh -c "[ $rc -eq 0 ] && ! grep -q '^[EW]:' '$WORK/lintian.log'"
sed 's/^/# lintian: /' "$WORK/lintian.log"
check "/etc/ccxd.conf is a conffile" sh -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -xO ./conffiles | grep -qx /etc/ccxd.conf"

# The next version, whose shipped ccxd.conf differs: for the upgrade.
NEXT=$WORK/next/ccxd-$VERSION
mkdir -p "$WORK/next"
cp -a "$SRC" "$NEXT"
echo "; a comment the next version adds" >> "$NEXT/conf/ccxd.conf"
sed -i "1s/(${VERSION})/(${VERSION}+next)/" "$NEXT/debian/changelog"
build_deb "$NEXT"
NEXT_DEB=$WORK/next/ccxd_${VERSION}+next_$ARCH.deb
check "and a next version, for the upgrade" test -s "$NEXT_DEB"

# ---- install, boot, use --------------------------------------------------------

# In /root: nspawn mounts a /tmp of its own.
cp "$DEB" "$NEXT_DEB" "$ROOT/root/"
# apt inside the container, as its administrator would run it: the container
# runs no systemd yet, so the postinst enables the units for the next boot.
in_root() { systemd-nspawn -q -D "$ROOT" -M "$MACHINE-apt" --register=no --keep-unit --pipe "$@" </dev/null; }
in_root env DEBIAN_FRONTEND=noninteractive apt install -y "/root/ccxd_${VERSION}_$ARCH.deb" >"$WORK/apt.log" 2>&1
rc=$?
check "apt install ./ccxd_${VERSION}_$ARCH.deb into a Debian 12 container" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/# /' "$WORK/apt.log"
check "the postinst made user ccxd from the sysusers file" sh -c "chroot '$ROOT' getent passwd ccxd | grep -q ':/var/lib/ccxd:'"
check "and enabled ccxd.service and ccxd.socket" sh -c "
	[ \"\$(chroot '$ROOT' systemctl is-enabled ccxd.service ccxd.socket | tr '\n' ' ')\" = 'enabled enabled ' ]"

boot_container
check "ccxd.socket runs after the boot, as installed" wait_for 10 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl is-active ccxd.socket </dev/null)\" = active ]"
check "so does ccxd.service" wait_for 20 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl is-active ccxd.service </dev/null)\" = active ]"
ns useradd -m -G ccxd alice
ns useradd -m bob
check "ccxctl status answers a user in group ccxd" sh -c "nsenter -t $LEADER -a runuser -u alice -- ccxctl status </dev/null | grep -q '^ccxd $VERSION, mode enforce'"
check "and tells another user how to be let in" sh -c "
	nsenter -t $LEADER -a runuser -u bob -- ccxctl status </dev/null 2>&1 | grep -q 'permission denied .*usermod -aG ccxd'"

# ---- upgrade ---------------------------------------------------------------------

# The administrator's edit: two one-CPU CCXs, whatever hwloc shows here.
ns sed -i "s/^topology = system$/topology = $TWO_CCX/" /etc/ccxd.conf
ns env DEBIAN_FRONTEND=noninteractive apt install -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	"/root/ccxd_${VERSION}+next_$ARCH.deb" >"$WORK/upgrade.log" 2>&1
rc=$?
check "apt upgrades it to the next version" sh -c "[ $rc -eq 0 ] && [ \"\$(nsenter -t $LEADER -a dpkg-query -W -f='\${Version}' ccxd </dev/null)\" = '${VERSION}+next' ]"
check "the upgrade keeps the edited /etc/ccxd.conf" ns grep -qx "topology = $TWO_CCX" /etc/ccxd.conf
check "and offers the new one beside it" ns grep -qx '; a comment the next version adds' /etc/ccxd.conf.dpkg-dist
check "ccxd runs again after the upgrade, with the edit" wait_for 20 sh -c "
	nsenter -t $LEADER -a ccxctl status </dev/null 2>/dev/null | grep -q 'topology $TWO_CCX'"

# ---- purge -----------------------------------------------------------------------

# A process ccxd narrowed, by hand: purging must give its CPUs back.
ns sh -c 'sleep 600 >/dev/null 2>&1 & echo $! > /tmp/sleeper'
SLEEPER=$(ns cat /tmp/sleeper)
allowed_in() { ns sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status"; }
before=$(allowed_in "$SLEEPER")
ns ccxctl pin "$SLEEPER" 1 >/dev/null
pinned=$(allowed_in "$SLEEPER")
check "root pins a process by hand" [ "$pinned" = 1 ]
ns env DEBIAN_FRONTEND=noninteractive apt purge -y ccxd >"$WORK/purge.log" 2>&1
rc=$?
check "apt purge ccxd" [ "$rc" -eq 0 ]
check "stopped ccxd" sh -c "! nsenter -t $LEADER -a systemctl is-active --quiet ccxd.service ccxd.socket </dev/null"
check "which gave the pinned process its CPUs back ($before)" sh -c "[ '$pinned' = 1 ] && [ \"\$(nsenter -t $LEADER -a sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$SLEEPER/status </dev/null)\" = '$before' ]"
left=$(ns sh -c 'find / /run -xdev \( -path /proc -o -path /sys -o -path /tmp -o -path /home -o -path /root \) -prune -o -name "*ccxd*" ! -name .ccxd-rootfs -print')
check "and left none of its files: configuration, units, state, socket (found: $(echo $left))" [ -z "$left" ]
check "dpkg knows it no more" sh -c "! nsenter -t $LEADER -a dpkg-query -W ccxd </dev/null >/dev/null 2>&1"
ns sh -c "kill $SLEEPER"
