#!/usr/bin/env python3
"""Writes the bash completion of the irt-* tools from their --help.

Run at build time with the built tools (tools/CMakeLists.txt), so that the
completion lists exactly the tools that are built and the options each one
has. Each tool's --help (CLI11's format: "Positionals:" and "Options:"
sections, one entry per line, "  -o,--output FILE   description") gives its
long options, which of them take a value and of what kind, and its
positional arguments. Values are completed by their type name: TRACE, A
and B with trace files (*.fb, *.zst; any file when none match), MODULE.ir
with IR modules, FILE and PREFIX with any file, a "{a,b}" choice with its
words; other values (N, PATH, ...) are not completed.

  gen_completion.py -o OUT.bash BIN/irt-check BIN/irt-diff ...
"""
import argparse
import os
import re
import subprocess
import sys

ENTRY = re.compile(r"^  \S")
CHOICES = re.compile(r"\{([^}]*)\}")


def kind_of(type_name):
    """The completion of a value whose CLI11 type name is `type_name`."""
    if not type_name:
        return ""
    m = CHOICES.search(type_name)
    if m:
        return "words:" + " ".join(m.group(1).split(","))
    base = type_name.split(":")[0]
    if base in ("TRACE", "A", "B"):
        return "trace"
    if base.endswith(".ir"):
        return "module"
    if base in ("FILE", "PREFIX"):
        return "file"
    return "none"


def parse_help(text):
    """(long options, {option: value kind}, [positional kinds]) of one --help.

    An entry is a line indented by exactly two spaces; its head (up to two
    spaces or the end of the line) is the names and the type name. A
    positional that takes several values ("args ARG ...") gets a "*"."""
    longs, valued, positionals = [], {}, []
    section = None
    for line in text.splitlines():
        if line in ("Positionals:", "Options:"):
            section = line[:-1]
            continue
        if not line.strip():
            section = None
            continue
        if section is None or not ENTRY.match(line):
            continue
        head = re.split(r"\s{2,}", line.strip())[0].split()
        names = head[0]
        # CLI11 writes the type name (none for a flag), then its notes:
        # REQUIRED, "...", [default], Needs:, Excludes:, Env:.
        type_name = head[1] if len(head) > 1 else None
        if type_name in ("REQUIRED", "...") or (type_name or "").endswith(":") or \
                (type_name or "").startswith("["):
            type_name = None
        if section == "Positionals":
            kind = kind_of(type_name) or "none"
            positionals.append(kind + ("*" if head[-1] == "..." else ""))
            continue
        kind = kind_of(type_name)
        for n in names.split(","):
            if n.startswith("--"):
                longs.append(n)
            if kind and n.startswith("-"):
                valued[n] = kind
    return longs, valued, positionals


def quote(words):
    return "'" + " ".join(words) + "'"


HEADER = """\
# bash completion for the irtrace tools. Generated at build time from each
# tool's --help by tools/gen_completion.py: do not edit. Source it, or
# install it as bash-completion's completions/TOOL for each tool.

# Files that match one of the patterns after $1 (and directories), or any
# file when there are no patterns or nothing matches.
_irt_files() {
  local cur=$1 pattern IFS=$'\\n'
  shift
  local -a found=()
  for pattern in "$@"; do
    found+=($(compgen -f -X "!$pattern" -- "$cur"))
  done
  if [[ $# -gt 0 ]]; then
    found+=($(compgen -d -- "$cur"))
  fi
  if [[ ${#found[@]} -eq 0 ]]; then
    found=($(compgen -f -- "$cur"))
  fi
  COMPREPLY=("${found[@]}")
  compopt -o filenames 2>/dev/null
}

# Completes a value of kind $2: trace, module, file, words:W1 W2..., none.
_irt_value() {
  local cur=$1 kind=$2
  case $kind in
    trace) _irt_files "$cur" '*.fb' '*.zst' ;;
    module) _irt_files "$cur" '*.ir' ;;
    file) _irt_files "$cur" ;;
    words:*) COMPREPLY=($(compgen -W "${kind#words:}" -- "$cur")) ;;
    *) COMPREPLY=() ;;
  esac
}

_irt_complete() {
  local tool=${1##*/} cur=${COMP_WORDS[COMP_CWORD]} prev= longs= positionals=
  local -A valued=()
  [[ $COMP_CWORD -gt 0 ]] && prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  case $tool in
"""

FOOTER = """\
    *) return ;;
  esac
  # --opt=VALUE: bash splits it at "=" (COMP_WORDBREAKS) or leaves it whole.
  if [[ $prev == = && $COMP_CWORD -gt 1 ]]; then
    _irt_value "$cur" "${valued[${COMP_WORDS[COMP_CWORD-2]}]}"
    return
  fi
  if [[ $cur == --*=* ]]; then
    _irt_value "${cur#*=}" "${valued[${cur%%=*}]}"
    ((${#COMPREPLY[@]})) && COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
    return
  fi
  if [[ -n $prev && -n ${valued[$prev]+set} ]]; then
    _irt_value "$cur" "${valued[$prev]}"
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$longs" -- "$cur"))
    return
  fi
  # The positional argument being completed: count those before it.
  local i n=0 word only_positionals=
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ -z $only_positionals && $word == -- ]]; then
      only_positionals=1
    elif [[ -z $only_positionals && $word == -?* ]]; then
      [[ $word != *=* && -n ${valued[$word]+set} ]] && ((i++))
    elif [[ $word != = ]]; then
      ((n++))
    fi
  done
  local -a kinds=($positionals)
  local kind=
  if ((n < ${#kinds[@]})); then
    kind=${kinds[n]}
  elif ((${#kinds[@]} > 0)) && [[ ${kinds[-1]} == *'*' ]]; then
    kind=${kinds[-1]}
  fi
  _irt_value "$cur" "${kind%'*'}"
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("tools", nargs="+", help="the built tools, as paths")
    args = ap.parse_args()
    tools = sorted(args.tools, key=os.path.basename)
    body = []
    names = []
    for path in tools:
        name = os.path.basename(path)
        run = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            print(f"gen_completion.py: '{name} --help' exited {run.returncode}", file=sys.stderr)
            return 1
        longs, valued, positionals = parse_help(run.stdout)
        if "--help" not in longs:
            print(f"gen_completion.py: no options found in '{name} --help'", file=sys.stderr)
            return 1
        names.append(name)
        body.append(f"    {name})")
        body.append(f"      longs={quote(longs)}")
        if valued:
            pairs = " ".join(f"[{opt}]='{kind}'" for opt, kind in valued.items())
            body.append(f"      valued=({pairs})")
        body.append(f"      positionals={quote(positionals)}")
        body.append("      ;;")
    text = HEADER + "\n".join(body) + "\n" + FOOTER
    text += f"complete -F _irt_complete {' '.join(names)}\n"
    tmp = args.output + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
