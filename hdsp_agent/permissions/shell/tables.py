"""What well-known commands are, for the shell analyser: read-only, package managers, network, interpreters.

Plain data, so a reviewer can read the whole classification in one place. The logic that uses it lives in
``shell_classify.py`` (dispatch), ``shell_programs.py`` (programs) and ``shell_files.py`` (file commands).
"""

from __future__ import annotations

from ...user_text import user_template

# fmt: off
# Commands that only read, when their path arguments stay in the project and avoid secrets. Each value lists
# the options that take a value, so the value is not mistaken for a path.
READ_COMMANDS: dict[str, frozenset[str]] = {
    "ls": frozenset({
        "-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--format", "--sort", "--time-style",
    }),
    "cat": frozenset(),
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"}),
    "wc": frozenset(),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
    "file": frozenset({"-m", "-F", "-e"}),
    "stat": frozenset({"-c", "--format", "--printf"}),
    "du": frozenset({"-d", "--max-depth", "-B", "--block-size", "-t", "--threshold", "--exclude"}),
    "tree": frozenset({"-L", "-I", "-P", "--filelimit"}),
    "diff": frozenset({"-U", "-C", "--label", "-x", "--exclude", "-I", "-X", "--exclude-from"}),
    "cmp": frozenset({"-n", "-i"}),
    "realpath": frozenset(),
    "readlink": frozenset(),
    "cut": frozenset({"-d", "-f", "-c", "-b", "--delimiter", "--fields", "--characters", "--bytes"}),
    "column": frozenset({"-s", "-t", "-c", "-o", "-N"}),
    "md5sum": frozenset(),
    "sha1sum": frozenset(),
    "sha256sum": frozenset(),
    "sha512sum": frozenset(),
    "od": frozenset({"-t", "-N", "-j", "-A", "-w"}),
    "hexdump": frozenset({"-n", "-s", "-e"}),
    "strings": frozenset({"-n", "-t"}),
    "jq": frozenset({"--arg", "--argjson", "--indent", "-f", "--from-file"}),
    "grep": frozenset({
        "-A", "-B", "-C", "-m", "--max-count", "--include", "--exclude", "--exclude-dir", "--color",
        "--colour", "-d", "-D", "--label",
    }),
    "egrep": frozenset({"-A", "-B", "-C", "-m"}),
    "fgrep": frozenset({"-A", "-B", "-C", "-m"}),
    "rg": frozenset({
        "-g", "--glob", "-t", "--type", "-T", "--type-not", "-A", "-B", "-C", "-m", "--max-count", "-M",
        "--max-columns", "-j", "--threads", "--max-depth", "-d", "--color", "--colors", "--sort", "--sortr",
        "-E", "--encoding", "-r", "--replace",
    }),
    "sort": frozenset({
        "-t", "-k", "-S", "-T", "--field-separator", "--key", "--buffer-size", "--temporary-directory",
    }),
    "uniq": frozenset({"-f", "-s", "-w"}),
    "find": frozenset(),
}
# Commands with no path arguments worth checking: information about the session, text written to stdout.
INFO_COMMANDS = frozenset({
    "pwd", "echo", "printf", "true", "false", "whoami", "id", "uname", "uptime", "nproc", "seq", "sleep",
    "test", "[", "locale", "tty", "groups", "arch", "cal", "which", "type", "tr", ":", "date", "hostname",
    "cd", "pushd", "popd", "dirs", "wait", "jobs", "yes", "expr", "getconf", "lsb_release", "basename",
    "dirname",
})
# Patterns that are positional (the first non-option argument), not a path to check.
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "jq"})
# Options that make an otherwise read-only command write or run something.
WRITING_OPTIONS: dict[str, frozenset[str]] = {
    "sort": frozenset({"--compress-program"}),
    "rg": frozenset({"--pre", "--pre-glob", "--search-zip", "-z"}),
    "date": frozenset({"-s", "--set"}),
    "find": frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}),
    "jq": frozenset({"-L"}),
}
# Options whose value is a file a command reads or writes (``date -f F``, ``sort -o F``): the value goes
# through the path check like any positional path, in the ``-oF``, ``-o F``, ``--output=F`` spellings.
FILE_READ_OPTIONS: dict[str, frozenset[str]] = {
    "date": frozenset({"-f", "--file", "-r", "--reference"}),
    "sort": frozenset({"--files0-from", "-T", "--temporary-directory"}),
    "wc": frozenset({"--files0-from"}),
    "du": frozenset({"--files0-from", "-X", "--exclude-from"}),
    "grep": frozenset({"-f", "--file", "--exclude-from"}),
    "egrep": frozenset({"-f", "--file"}),
    "fgrep": frozenset({"-f", "--file"}),
    "rg": frozenset({"-f", "--file", "--ignore-file"}),
    "diff": frozenset({"--from-file", "--to-file", "-X", "--exclude-from"}),
    "jq": frozenset({"-f", "--from-file"}),
    "file": frozenset({"-f", "--files-from", "-m", "--magic-file"}),
    "md5sum": frozenset({"-c", "--check"}),
    "sha1sum": frozenset({"-c", "--check"}),
    "sha256sum": frozenset({"-c", "--check"}),
    "sha512sum": frozenset({"-c", "--check"}),
    "tree": frozenset({"--fromfile"}),
    "xargs": frozenset({"-a", "--arg-file"}),
}
# Options whose value is a file holding the names of the files to read (``sort --files0-from=F``): those
# files are known only at run time, so the command asks (the list file itself is read-checked above).
FILE_LIST_OPTIONS: dict[str, frozenset[str]] = {
    "sort": frozenset({"--files0-from"}),
    "wc": frozenset({"--files0-from"}),
    "du": frozenset({"--files0-from"}),
    "file": frozenset({"-f", "--files-from"}),
    "md5sum": frozenset({"-c", "--check"}),
    "sha1sum": frozenset({"-c", "--check"}),
    "sha224sum": frozenset({"-c", "--check"}),
    "sha256sum": frozenset({"-c", "--check"}),
    "sha384sum": frozenset({"-c", "--check"}),
    "sha512sum": frozenset({"-c", "--check"}),
    "b2sum": frozenset({"-c", "--check"}),
    "cksum": frozenset({"-c", "--check"}),
}
# Other options that take a value, for commands not in READ_COMMANDS (a short-option cluster ends at one:
# ``date -Iseconds`` is ``-I seconds``, not ``-s``).
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "date": frozenset({"-d", "--date", "-I", "-s", "--set"}),
    "xargs": frozenset({"-d", "-E", "-I", "-L", "-n", "-P", "-s", "-a"}),
}
FILE_WRITE_OPTIONS: dict[str, frozenset[str]] = {
    "sort": frozenset({"-o", "--output"}),
    "tree": frozenset({"-o"}),
    "time": frozenset({"-o", "--output"}),
}

# Privilege escalation: the agent never runs anything as another user.
PRIVILEGE_COMMANDS = frozenset({
    "sudo", "su", "doas", "pkexec", "runuser", "run0", "sudoedit", "calife", "ksu", "sg", "newgrp",
    "setpriv", "capsh",
})
# Commands that change the machine itself, not files: denied whatever their arguments (the agent has no
# business with kernel modules, the firewall, mounts, accounts or scheduled jobs).
# Why each is denied: a catalog template (%1: the command's name).
SYSTEM_COMMANDS: dict[str, str] = {
    **dict.fromkeys(
        ("insmod", "modprobe", "rmmod", "depmod", "kmod"),
        user_template("loads or removes kernel modules (%1)"),
    ),
    **dict.fromkeys(
        ("iptables", "ip6tables", "iptables-restore", "ip6tables-restore", "iptables-legacy", "nft", "ufw",
         "firewall-cmd", "ebtables", "arptables"),
        user_template("changes the firewall (%1)"),
    ),
    **dict.fromkeys(
        ("mount", "umount", "swapoff", "swapon", "losetup", "cryptsetup"),
        user_template("mounts or swaps (%1)"),
    ),
    **dict.fromkeys(("setcap", "chattr"), user_template("changes file capabilities or attributes (%1)")),
    **dict.fromkeys(
        ("useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod", "passwd", "chpasswd",
         "visudo", "adduser", "deluser", "gpasswd", "chsh"),
        user_template("changes user accounts (%1)"),
    ),
    **dict.fromkeys(
        ("crontab", "at", "batch", "atrm", "anacron"), user_template("schedules commands to run later (%1)")
    ),
    "sysctl": user_template("changes kernel parameters (%1)"),
}
# Owners and groups that give a file to the administrator (``chown root``): a privilege change.
PRIVILEGED_OWNERS = frozenset({"root", "0", "wheel", "sudo", "admin", "adm", "shadow", "disk"})
# Format, partition or wipe disks (and every mkfs.* by prefix, in code).
DISK_COMMANDS = frozenset({
    "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard",
    "badblocks",
})
POWER_COMMANDS = frozenset({"shutdown", "reboot", "halt", "poweroff", "kexec"})
SERVICE_MANAGERS = frozenset({
    "systemctl", "service", "launchctl", "supervisorctl", "rc-service", "initctl", "sv", "openrc",
    "systemd-run",
})
SYSTEMCTL_POWER = frozenset({
    "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "soft-reboot",
})
PROCESS_KILLERS = frozenset({"kill", "pkill", "killall", "xkill", "skill", "killall5"})

# Variables whose value is likely a credential: expanding them in a command hands it to the model.
SECRET_VARIABLE = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)"

# Package managers (which subcommands only look is decided in ``shell_programs.py``).
PACKAGE_MANAGERS = frozenset({
    "pip", "pip3", "pipx", "uv", "poetry", "pdm", "hatch", "conda", "mamba", "micromamba", "npm", "npx",
    "yarn", "pnpm", "bun", "apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "rpm", "zypper", "pacman",
    "apk", "brew", "port", "gem", "bundle", "cargo", "rustup", "go", "snap", "flatpak", "nix-env", "composer",
    "easy_install", "jupyter-labextension",
})
# What a package manager may do without asking: only listing what is installed, by managers that load no
# project file to do it. npm, yarn, cargo, bundle, uv, poetry, go and the like read project files that can
# run code (lifecycle scripts, build scripts, Gemfiles, toolchain files), so every subcommand asks.
PACKAGE_QUERIES: dict[str, frozenset[str]] = {
    "pip": frozenset({"list", "freeze", "show", "check", "help", "--version", "-V", "--help"}),
    "pip3": frozenset({"list", "freeze", "show", "check", "help", "--version", "-V", "--help"}),
    "conda": frozenset({"list", "info", "--version", "-V", "--help"}),
    "mamba": frozenset({"list", "info", "--version", "-V", "--help"}),
    "micromamba": frozenset({"list", "info", "--version", "--help"}),
    "gem": frozenset({"list", "--version", "--help"}),
    "brew": frozenset({"list", "info", "--version", "--help"}),
    "dpkg": frozenset({"-l", "--list", "-L", "--listfiles", "-s", "--status", "--version"}),
    "rpm": frozenset({"-q", "-qa", "-qi", "-ql", "--query", "--version"}),
    "apt": frozenset({"list", "show", "--version"}),
    "npm": frozenset({"--version", "-v", "--help", "-h"}),
    "pipx": frozenset({"list", "--version", "--help"}),
}
PACKAGE_INSTALL_SUBCOMMANDS = frozenset({
    "install", "i", "add", "update", "upgrade", "remove", "uninstall", "rm", "sync", "get", "ci",
    "reinstall", "-S", "-U", "-R", "-Syu",
})

NETWORK_COMMANDS = frozenset({
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "tftp",
    "http", "https", "xh", "aria2c", "nmap", "ping", "ping6", "dig", "nslookup", "host", "traceroute", "mtr",
    "whois", "ssh-keyscan", "fetch", "lftp", "axel", "lynx", "w3m", "links", "gh", "aws", "gcloud", "az",
})
# Programs whose output is a downloaded payload (piping it into a shell runs code from the internet).
DOWNLOADERS = frozenset({
    "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat", "netcat", "socat", "lftp",
    "lynx", "w3m", "links", "tftp", "ftp",
})
# Programs that decode an obfuscated payload when given these options (None: always).
DECODERS: dict[str, frozenset[str] | None] = {
    "base64": frozenset({"-d", "--decode", "-D"}),
    "base32": frozenset({"-d", "--decode"}),
    "basenc": frozenset({"-d", "--decode"}),
    "xxd": frozenset({"-r", "--revert"}),
    "openssl": frozenset({"-d", "-base64", "-a", "base64"}),
    "gpg": frozenset({"-d", "--decrypt"}),
    "gzip": frozenset({"-d", "--decompress"}),
    "bzip2": frozenset({"-d", "--decompress"}),
    "xz": frozenset({"-d", "--decompress"}),
    "uudecode": None,
    "gunzip": None,
    "zcat": None,
    "bzcat": None,
    "xzcat": None,
    "unxz": None,
    "rev": None,
}

SHELLS = frozenset({
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "busybox",
})
# Shell options that take the next word as their value.
SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Shell options that make it run a startup file (``--rcfile F``, an interactive or login shell's rc files).
SHELL_STARTUP_OPTIONS = frozenset({"--rcfile", "--init-file", "--login", "-i", "-l", "--debugger"})
# Programs that run code or change things in ways the analyser does not follow: they ask.
INTERPRETERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "ipython", "node", "nodejs", "deno", "ruby", "perl",
    "php", "lua", "luajit", "R", "Rscript", "julia", "java", "jshell", "kotlin", "scala", "groovy", "swift",
    "pwsh", "powershell", "osascript", "tclsh", "wish", "awk", "gawk", "mawk", "nawk", "jupyter", "sqlite3",
    "psql", "mysql", "gdb", "expect", "make", "cmake", "ninja", "pytest", "tox", "nox", "just", "docker",
    "podman", "kubectl", "helm", "terraform", "gcc", "g++", "cc", "clang", "rustc", "javac", "tsc",
    "ansible", "ansible-playbook", "vagrant", "sed", "vim", "vi", "nvim", "emacs", "nano", "less", "more",
    "watch", "crontab", "at", "batch", "screen", "tmux",
})
# Interpreters' options that carry code to run on the command line.
CODE_OPTIONS = frozenset({"-c", "-e", "--eval", "-E", "-r", "--command", "-p", "--print"})
# Options whose value is a module or library rather than a script path.
MODULE_OPTIONS = frozenset({"-m", "-M", "-I", "-r", "--require", "-W", "-X"})
VERSION_ARGUMENTS = frozenset({"--version", "-V", "-v", "-version", "--help", "-h"})

# Run another command (the words after their own options); the inner command is analysed as a part.
WRAPPERS: dict[str, frozenset[str]] = {
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-t"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "setsid": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "fakeroot": frozenset({"-l", "--lib", "--faked", "-s", "-i"}),
    "eatmydata": frozenset(),
    "nocache": frozenset(),
    "faketime": frozenset(),
    "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "rlwrap": frozenset(),
    "catchsegv": frozenset(),
    "dbus-run-session": frozenset(),
    "xvfb-run": frozenset({"-n", "-s", "-f", "-e", "-p", "-w"}),
    "prlimit": frozenset({"-p", "--pid"}),
    "cpulimit": frozenset({"-l", "-p", "-e", "--limit", "--pid"}),
    "setarch": frozenset(),
    "linux32": frozenset(),
    "linux64": frozenset(),
    "numactl": frozenset({"-C", "-N", "-m", "-p", "-i"}),
    "xargs": frozenset({
        "-I", "-n", "-P", "-d", "-a", "-E", "-L", "-s", "--max-args", "--max-procs", "--delimiter",
        "--arg-file", "--replace", "--max-lines", "--max-chars",
    }),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "unbuffer": frozenset(),
    "caffeinate": frozenset(),
    "flock": frozenset({"-w", "--timeout", "-E"}),
}
# Wrappers that always ask (another root, new namespaces, a tracer), but whose command is analysed too so a
# disaster inside is denied.
ASKING_WRAPPERS: dict[str, frozenset[str]] = {
    "chroot": frozenset({"--userspec", "--groups"}),
    "unshare": frozenset({"-S", "-G", "--setuid", "--setgid", "-R", "--root", "-w", "--wd"}),
    "nsenter": frozenset({"-t", "--target", "-S", "-G", "-r", "-w"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a"}),
    "valgrind": frozenset(),
    "script": frozenset({"-c", "--command", "-E", "--echo", "-T", "-t", "-I", "-O", "-B"}),
}
# Wrappers whose first positional argument is theirs (timeout's duration, flock's lock file), not the command.
WRAPPER_LEADING_ARGS = {
    "timeout": 1, "flock": 1, "taskset": 1, "chrt": 1, "faketime": 1, "setarch": 1, "chroot": 1,
}

# Shell builtins that change the environment every later command runs in.
ENVIRONMENT_BUILTINS = frozenset({
    "export", "unset", "alias", "unalias", "set", "declare", "typeset", "readonly", "local", "ulimit",
    "umask", "shopt", "trap", "hash", "enable", "let", "read", "mapfile", "readarray", "getopts",
})
# Shell options that are harmless: ``set -e``, ``set -o pipefail``, ...
HARMLESS_SET_FLAGS = frozenset({
    "-e", "-u", "-x", "-o", "+e", "+u", "+x", "+o", "-eu", "-ex", "-eux", "-euo", "-uo", "-xe", "pipefail",
    "errexit", "nounset", "xtrace",
})
# Environment variables that change which programs run or what they load.
DANGEROUS_VARIABLES = frozenset({
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "PS4", "SHELLOPTS", "BASHOPTS", "PYTHONPATH",
    "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "EDITOR",
    "VISUAL", "HOME", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "HTTP_PROXY", "HTTPS_PROXY",
    "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy", "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL", "npm_config_registry", "SHELL", "TMPDIR", "CDPATH", "GLOBIGNORE",
})

# Environment variables an env prefix, ``env`` or ``export`` may set without asking: they change how output
# looks, never which code or configuration a program loads. Everything else asks (GIT_*, LD_*, PYTHON*,
# *_CONFIG*, XDG_*, PAGER, EDITOR, BASH_ENV, BASH_FUNC_*, npm_config_*, ...): an allowlist, because the list
# of variables that make some program load code is open-ended.
HARMLESS_VARIABLES = frozenset({
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES",
    "TERM", "COLORTERM", "CI", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
    "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONFAULTHANDLER", "SOURCE_DATE_EPOCH", "POSIXLY_CORRECT",
    "DEBIAN_FRONTEND", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
    "TOKENIZERS_PARALLELISM", "TQDM_DISABLE", "GIT_TERMINAL_PROMPT", "PIP_DISABLE_PIP_VERSION_CHECK",
    "PIP_NO_INPUT",
})
HARMLESS_VARIABLE_PREFIXES = ("LC_",)
# A plain shell variable (``x=1``, no command after it) only matters to later commands when the variable
# is already exported (PATH, PAGER, GIT_*, ...): these names and name parts are treated as such.
LOADER_VARIABLE_PREFIXES = (
    "GIT_", "LD_", "DYLD_", "PYTHON", "PERL", "RUBY", "NODE_", "NPM_", "BASH_", "XDG_", "LESS", "MAN",
    "GROFF", "SSH_", "GNUPG", "GPG_", "CARGO_", "RUST", "GO", "JAVA", "_JAVA", "JDK_", "MAVEN", "GRADLE",
    "PIP_", "UV_", "CONDA", "VIRTUAL_ENV", "PS1", "PS2", "PS3", "PS4", "PROMPT_", "HIST", "TERMINFO",
    "RIPGREP", "JUPYTER", "IPYTHON", "HDSP", "KUBE", "DOCKER", "AWS_", "NIX_", "R_", "JULIA",
)
LOADER_VARIABLE_PARTS = (
    "CONFIG", "_OPTS", "OPTIONS", "PATH", "EDITOR", "PAGER", "HOME", "RC", "SHELL", "PROXY", "PLUGIN",
)

# git: subcommands that only read (some only with certain options, checked in code).
GIT_READ_SUBCOMMANDS = frozenset({
    "status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "ls-tree", "blame", "describe",
    "shortlog", "reflog", "tag", "remote", "config", "cat-file", "grep", "whatchanged", "count-objects",
    "merge-base", "name-rev", "cherry", "for-each-ref", "show-ref", "check-ignore", "version", "help",
    "rev-list", "show-branch", "stash", "diff-tree", "diff-files", "diff-index", "var", "annotate",
})
GIT_ASK_REASONS = {
    "push": "pushes commits to a remote",
    "reset": "moves the branch (and with --hard discards uncommitted changes)",
    "clean": "deletes untracked files",
    "checkout": "changes the working tree",
    "switch": "changes the working tree",
    "restore": "overwrites files in the working tree",
    "commit": "creates a commit",
    "add": "stages changes",
    "rm": "deletes files from the working tree and the index",
    "mv": "moves files",
    "merge": "merges branches",
    "rebase": "rewrites history",
    "cherry-pick": "applies commits",
    "revert": "creates revert commits",
    "pull": "fetches from the network and merges",
    "fetch": "fetches from the network",
    "clone": "downloads a repository",
    "ls-remote": "contacts a remote",
    "submodule": "changes submodules (may fetch from the network)",
    "gc": "rewrites the object store",
    "prune": "deletes unreachable objects",
    "filter-branch": "rewrites history",
    "update-ref": "moves references",
    "init": "creates a repository",
    "apply": "applies a patch to files",
    "am": "applies patches as commits",
    "worktree": "manages working trees",
    "lfs": "transfers large files",
}
# git branch options that only list branches.
GIT_BRANCH_LISTING = frozenset({
    "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "-l", "--show-current",
    "--contains", "--no-contains", "--merged", "--no-merged", "--color", "--no-color", "--column",
    "--no-column", "-i", "--ignore-case", "--points-at",
})
# fmt: on
