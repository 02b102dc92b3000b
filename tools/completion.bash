# Bash completion for the irtrace tools: long options as each tool's --help
# lists them, file names otherwise (bash-completion's _longopt). Source this
# file, or install it as /usr/share/bash-completion/completions/irt-print
# with a symlink of that name for each tool. tests/tool_lists.py checks that
# the line names every built tool.
complete -F _longopt irt-check irt-diff irt-dot irt-export irt-grad irt-print irt-replay irt-slice irt-stats irt-trace
