"""Network shaping helpers: what the kernel offers (netem is missing on some kernels, e.g. this one)."""

import subprocess


def has_netem() -> bool:
    """True if the kernel accepts a netem qdisc (tried on a throw-away dummy device in a fresh namespace)."""
    ns = "toastbed-probe"
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay",
                            "1ms"], capture_output=True, timeout=10)
        return r.returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)
