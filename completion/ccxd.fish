# fish completion for ccxd(8); installed as
# $(PREFIX)/share/fish/vendor_completions.d/ccxd.fish.

complete -c ccxd -f
complete -c ccxd -s c -l config -r -F -d 'read FILE and FILE.d/*.conf'
complete -c ccxd -s n -l check-config -r -F -d 'check FILE and the topology it names, and exit'
complete -c ccxd -l x3d-mode -x -a 'apply restore' -d 'set or put back the AMD X3D mode, and exit'
complete -c ccxd -l give-back -d 'give back what a ccxd that stopped for good left placed'
complete -c ccxd -s v -l verbose -d 'log debug messages too'
complete -c ccxd -s V -l version -d 'print the version and exit'
complete -c ccxd -s h -l help -d 'print the help and exit'
