# make install and make uninstall, into a DESTDIR.
. "$(dirname "$0")/lib.sh"

DEST=$WORK/root
cd "$TOP" || exit 1
check "make install into DESTDIR with PREFIX" sh -c "make -s install DESTDIR=$DEST PREFIX=/usr >/dev/null"
for f in /usr/sbin/ccxd /usr/bin/ccxctl /etc/ccxd.conf; do
	check "installs $f" test -e "$DEST$f"
done
check "the installed ccxd runs" sh -c "$DEST/usr/sbin/ccxd --check-config $DEST/etc/ccxd.conf | grep -q 'configuration OK'"
echo "; edited" >> "$DEST/etc/ccxd.conf"
make -s install DESTDIR="$DEST" PREFIX=/usr >/dev/null
check "a second install keeps an edited /etc/ccxd.conf" grep -q '^; edited' "$DEST/etc/ccxd.conf"
make -s uninstall DESTDIR="$DEST" PREFIX=/usr >/dev/null
check "uninstall removes the programs" sh -c "[ ! -e $DEST/usr/sbin/ccxd ] && [ ! -e $DEST/usr/bin/ccxctl ]"
check "uninstall keeps an edited configuration" test -e "$DEST/etc/ccxd.conf"
rm "$DEST/etc/ccxd.conf"
make -s install DESTDIR="$DEST" PREFIX=/usr >/dev/null
make -s uninstall DESTDIR="$DEST" PREFIX=/usr >/dev/null
check "uninstall removes an unedited configuration" test ! -e "$DEST/etc/ccxd.conf"
