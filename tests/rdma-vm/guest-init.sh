#!/bin/busybox sh
# /init of the rdma-vm guest (run-guest.sh packs it): mounts, loads Soft-RoCE, makes rxe0
# on a dummy netdev with MTU 9000 (RDMA MTU 4096), runs /opt/guest-tests.sh, prints the
# marker the host looks for, powers off.
/bin/busybox --install -s /bin
rm -f /bin/ip /sbin/ip            # iproute2's ip, not busybox's
export PATH=/opt/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs shm /dev/shm
ulimit -l unlimited
echo "rdma-vm: init started, kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"

for m in $(cat /lib/modules/load-order); do
  args=""
  [ "$m" = dummy.ko ] && args="numdummies=0"
  insmod "/lib/modules/$m" $args || echo "rdma-vm: insmod $m failed"
done

/usr/sbin/ip link set lo up
/usr/sbin/ip link add rdma0 type dummy
/usr/sbin/ip link set rdma0 mtu 9000
/usr/sbin/ip addr add 192.0.2.1/24 dev rdma0
/usr/sbin/ip link set rdma0 up
/usr/sbin/rdma link add rxe0 type rxe netdev rdma0

# The IPv4-mapped RoCE v2 GID appears shortly after the link is up.
i=0
while [ $i -lt 100 ]; do
  grep -q '0000:0000:0000:0000:0000:ffff:c000:0201' /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
  sleep 0.1
  i=$((i + 1))
done

sh /opt/guest-tests.sh
rc=$?
echo "RDMA-VM-EXIT=$rc"
sync
poweroff -f
