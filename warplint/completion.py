"""``warplint --generate-shell-completion {bash,zsh,fish}``: a completion script written from the argparse
parser itself (every option, the choices of those that have them, rule codes for the options that take
codes, paths for those that take a path), so it never drifts from the command line. As ruff's, it is
meant for ``eval``/``source`` or a file in the shell's completion directory."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterable

SHELLS = ("bash", "zsh", "fish")
# Options whose value is rule codes (comma-separated, as `--select WC101,WC3`), and those whose value is a path.
CODE_OPTIONS = ("--select", "--extend-select", "--ignore")
PATH_OPTIONS = ("--output-file", "--config", "--stdin-filename", "--cache-dir", "--keep-artifacts")


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings]


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _words(items: Iterable[str]) -> str:
    return " ".join(sorted(items))


def bash(parser: argparse.ArgumentParser, codes: Iterable[str], commands: Iterable[str]) -> str:
    actions = _options(parser)
    options = _words(o for a in actions for o in a.option_strings)
    cases = [f'        {"|".join(CODE_OPTIONS)})\n'
             '            local head=""; [[ "$cur" == *,* ]] && head="${cur%,*},"\n'
             '            COMPREPLY=( $(compgen -P "$head" -W "$codes" -- "${cur##*,}") ); return;;']
    cases.append(f'        {"|".join(PATH_OPTIONS)})\n            COMPREPLY=( $(compgen -f -- "$cur") ); return;;')
    for action in actions:
        if action.choices:
            cases.append(f'        {"|".join(action.option_strings)})\n'
                         f'            COMPREPLY=( $(compgen -W {shlex.quote(_words(map(str, action.choices)))} '
                         '-- "$cur") ); return;;')
    valued = [o for a in actions if _takes_value(a) and not a.choices for o in a.option_strings
              if o not in CODE_OPTIONS and o not in PATH_OPTIONS]
    if valued:
        cases.append(f'        {"|".join(valued)})\n            return;;')
    body = "\n".join(cases)
    return f"""# warplint completion for bash: eval "$(warplint --generate-shell-completion bash)"
_warplint() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local codes={shlex.quote(_words(codes))}
    COMPREPLY=()
    case "$prev" in
{body}
    esac
    if [[ "$COMP_CWORD" -eq 2 && "${{COMP_WORDS[1]}}" == rule ]]; then
        COMPREPLY=( $(compgen -W "$codes --all" -- "$cur") ); return
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W {shlex.quote(options)} -- "$cur") ); return
    fi
    if [[ "$COMP_CWORD" -eq 1 ]]; then
        COMPREPLY=( $(compgen -W {shlex.quote(_words(commands))} -- "$cur") )
    fi
    COMPREPLY+=( $(compgen -f -- "$cur") )
}}
complete -o filenames -F _warplint warplint
"""


def zsh(parser: argparse.ArgumentParser, codes: Iterable[str], commands: Iterable[str]) -> str:
    """zsh through its bash completion layer (``bashcompinit``): the same behaviour from one source."""
    return ("#compdef warplint\n# warplint completion for zsh: eval \"$(warplint --generate-shell-completion zsh)\"\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + bash(parser, codes, commands))


def fish(parser: argparse.ArgumentParser, codes: Iterable[str], commands: Iterable[str]) -> str:
    lines = ["# warplint completion for fish: warplint --generate-shell-completion fish | source",
             f"complete -c warplint -n '__fish_use_subcommand' -a {shlex.quote(_words(commands))}",
             f"complete -c warplint -n '__fish_seen_subcommand_from rule' -x -a {shlex.quote(_words(codes))}"]
    for action in _options(parser):
        flags = " ".join(f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}" for o in action.option_strings)
        described = f" -d {shlex.quote((action.help or '').split('(')[0].strip()[:60])}" if action.help else ""
        if any(o in CODE_OPTIONS for o in action.option_strings):
            lines.append(f"complete -c warplint {flags} -x -a {shlex.quote(_words(codes))}{described}")
        elif action.choices:
            lines.append(f"complete -c warplint {flags} -x -a {shlex.quote(_words(map(str, action.choices)))}"
                         f"{described}")
        elif any(o in PATH_OPTIONS for o in action.option_strings):
            lines.append(f"complete -c warplint {flags} -r -F{described}")
        elif _takes_value(action):
            lines.append(f"complete -c warplint {flags} -x{described}")
        else:
            lines.append(f"complete -c warplint {flags}{described}")
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser, codes: Iterable[str], commands: Iterable[str]) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](parser, list(codes), list(commands))
