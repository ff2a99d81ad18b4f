#!/bin/sh
# PID 1 of the User-Mode Linux guest. The host filesystem is the guest's
# root (hostfs); the runner passes HARNESS_* through the kernel command line.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# Private /run for `ip netns` (the host's /run is untouched: this mount
# lives in the guest kernel only).
mount -t tmpfs tmpfs /run
mkdir -p /run/netns
# The kernel's module autoloader (e.g. SCTP's cookie HMAC) must look in the
# UML module tree, not the host's /lib/modules.
printf '#!/bin/sh\nexec /sbin/modprobe -d "%s" "$@"\n' "$HARNESS_MODROOT" > /run/modprobe-uml
chmod +x /run/modprobe-uml
echo /run/modprobe-uml > /proc/sys/kernel/modprobe
# HARNESS_WATCH (replay --watch): the sctp-handover binary to watch the MN with.
"$HARNESS_BIN" guest --run-dir "$HARNESS_RUN_DIR" --modroot "$HARNESS_MODROOT" \
    ${HARNESS_WATCH:+--watch "$HARNESS_WATCH"}
echo "HARNESS-EXIT $?"
# Power off at once; PID 1 must not return before the kernel halts.
echo o > /proc/sysrq-trigger
sleep 30
