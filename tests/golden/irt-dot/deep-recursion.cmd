# golden: release-only
# 10^6 calls deep: drawing it all is refused (early: the refusal reads only what
# it counted), --levels draws the top
irt-trace testdata/ir/deep.ir deep -o deep.fb
irt-dot deep.fb > /dev/null
echo "status $?"
irt-dot --levels 3 deep.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
irt-dot --node @2/@6/@6/@6/@6 --levels 2 deep.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
# 200 clusters deep: indentation stops growing at 64 levels, so that the text
# stays linear in the graph however deep the calls nest
irt-dot --levels 200 deep.fb | awk '{ n = match($0, /[^\t]/) - 1; if (n > m) m = n } END { print NR " lines, deepest indentation " m " tabs" }'
