# Sourced by the package checks. overlay_root WORK_DIR mounts at WORK_DIR/root a throwaway copy-on-write view
# of this machine's root (an overlay whose upper layer is a tmpfs on WORK_DIR), with its own /proc, /dev, an
# empty /run and /tmp, and sets $root. Call it only inside a private mount namespace (unshare --mount): every
# mount, and everything written below $root, vanishes with the namespace and nothing reaches the host.
# Returns 77 when overlayfs over / is not available here.
overlay_root() {
    local work=$1
    mount -t tmpfs -o size=1g toast-package-check "$work"
    mkdir "$work/upper" "$work/work" "$work/root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/work" "$work/root" 2>/dev/null ||
        return 77
    root=$work/root
    # Never run the package scripts anywhere but in the overlay.
    [ "$(findmnt -n -o FSTYPE --target "$root")" = overlay ] || { echo "overlay not mounted at $root"; return 1; }
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    # An empty /run: no /run/systemd/system, so maintainer scripts never talk to the host's service manager.
    mount -t tmpfs tmpfs "$root/run"
    mount -t tmpfs tmpfs "$root/tmp"
}
