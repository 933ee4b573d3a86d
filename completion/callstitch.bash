# bash completion for callstitch                          -*- shell-script -*-
#
# Commands and options come from `callstitch --help` and `callstitch
# COMMAND --help` at completion time, so they are never out of date.

_callstitch_options()
{
	# every -x and --long word at the start of an option line of the help
	"$1" "$2" --help 2>/dev/null |
		sed -n 's/^ \{1,6\}\(-.*\)/\1/p' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u
}

_callstitch()
{
	local cur prev words cword
	_init_completion -n = || return

	local bin=${words[0]} cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$("$bin" --help 2>/dev/null |
			awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
			--help --version" -- "$cur"))
		return
	fi

	# `record ... -- COMMAND ARGS`: complete the profiled command
	for ((i = 2; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			_command_offset $((i + 1))
			return
		fi
	done

	case $prev in
	-i | --input | -o | --output | --kallsyms)
		_filedir
		return ;;
	--symfs)
		_filedir -d
		return ;;
	-p | --pid)
		_pids
		return ;;
	-t | --tid | --comm | -e | --event | -F | --freq | -c | --count | \
	--title | -n | -m | --mmap-pages | --drain-ms | --max-stack | \
	--percent-limit | -g | --call-graph | --fields)
		return ;;
	-s | --sort)
		# the keys the help lists ("any of comm,pid,..."), each after
		# the last comma of a list
		local keys prefix=
		keys=$("$bin" "$cmd" --help 2>/dev/null |
			sed -n 's/.*--sort KEYS.* any of \([a-z,]*\).*/\1/p' | tr , ' ')
		[[ $cur == *,* ]] && prefix=${cur%,*},
		COMPREPLY=($(compgen -P "$prefix" -W "$keys" -- "${cur##*,}"))
		compopt -o nospace
		return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_callstitch_options "$bin" "$cmd")" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	_filedir
}
complete -F _callstitch callstitch
