# Sibling clusters are drawn in execution order, nested ones inside the
# cluster of their call before its own nodes; 40 calls of inner, each with
# two calls of leaf, and the whole of one iteration
irt-trace testdata/ir/siblings.ir sib 0.5 20 -o s.fb
irt-dot --levels 3 s.fb | grep -o "subgraph cluster_[0-9]*" | tr '\n' ' '; echo
irt-dot --max-nodes 0 s.fb | grep -o "subgraph cluster_[0-9]*" | sort -t_ -k2 -n -c && echo "in execution order"
irt-trace testdata/ir/siblings.ir sib 0.5 1 -o s1.fb
irt-dot s1.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
