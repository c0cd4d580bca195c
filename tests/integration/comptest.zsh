# comptest.zsh DIR LINE: what zsh's completion makes of LINE and a Tab, with
# the completion functions of DIR first in $fpath: an interactive zsh in a
# pseudo-terminal (zsh/zpty), its screen as text, escape sequences and all
# (the line as completed, and the list of matches under it).
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='>'; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "setopt nobeep; LISTMAX=0; COLUMNS=200; print RE''ADY"
zpty -r -m z out '*READY*'
zpty -w -n z "$2"$'\t'
screen=
for i in {1..20}; do
	sleep 0.1
	while zpty -rt z chunk 2>/dev/null; do screen+=$chunk; done
done
print -r -- "$screen"
zpty -d z
