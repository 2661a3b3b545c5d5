#!/bin/bash
# House style of the userspace components, lvmish/, librarian/ and common/
# (docs/STYLE.md): no function longer than 80 lines, and
# every C file as the repository's .clang-format lays it out.
. tests/lib/tap.sh

# A definition starts at a line that begins with an identifier and has a
# parenthesis (column 0), and ends at the next "}" in column 0.
lengths() {
	awk '
	/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !/^(typedef|enum|union|static const|const)/ { start = FNR; name = $0 }
	/^\{/ && start { body = 1 }
	/^\}/ && body {
		sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
		printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
		start = 0; body = 0
	}' "$@"
}

mapfile -t files < <(git ls-files 'lvmish/*.c' 'lvmish/*.h' 'librarian/*.c' 'librarian/*.h' 'common/*.c' 'common/*.h')
mapfile -t cfiles < <(git ls-files 'lvmish/*.c' 'librarian/*.c' 'common/*.c')
long=$(lengths "${cfiles[@]}" | sort -rn | awk '$1 > 80')
t_is "$long" "" "no function in lvmish/, librarian/ or common/ is longer than 80 lines (the longest: $(lengths "${cfiles[@]}" | sort -rn | head -n 1))"
t_ok "$([ "$(lengths "${cfiles[@]}" | wc -l)" -gt 100 ]; echo $?)" "the length check sees the functions ($(lengths "${cfiles[@]}" | wc -l))"

if ! command -v clang-format >/dev/null; then
	t_diag "clang-format is not installed: layout not checked"
	t_done
fi
bad=
for f in "${files[@]}"; do
	clang-format --style=file "$f" | cmp -s - "$f" || bad="$bad $f"
done
t_is "${bad# }" "" "every C file of lvmish/, librarian/ and common/ is laid out by .clang-format"
t_done
