"""The process's open-file limit, raised to the hard limit at start-up.

Every open stream is a socket: a process holding 10,000 idle streams needs more descriptors than
the usual soft limit of 1,024. The soft limit is raised as far as the hard limit allows (the
hard limit belongs to the operator: systemd `LimitNOFILE`, docker `--ulimit nofile`).
"""

import resource


def raise_open_files_limit() -> int:
    """Raise RLIMIT_NOFILE's soft limit to its hard limit; returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1_048_576)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft
