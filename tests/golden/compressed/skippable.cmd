# zstd skippable frames (RFC 8878, magic 0x184D2A50..5F) are skipped wherever
# they are, at the start of the stream too, as zstd -d does.
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-trace -o h.fb.zst testdata/ir/h.ir h 2.0 2
printf '\x50\x2a\x4d\x18\x04\x00\x00\x00abcd' > skip
printf '\x5f\x2a\x4d\x18\x00\x00\x00\x00' > skip0
cat skip h.fb.zst skip0 > s1.zst
zstd -q -dc s1.zst | cmp - h.fb && echo "zstd reads it"
irt-check s1.zst | tail -1
cat s1.zst | irt-print --levels 1 | head -1
head -c 1000 h.fb | zstd -q -c > a.zst
tail -c +1001 h.fb | zstd -q -c > b.zst
cat skip0 a.zst skip skip b.zst > s2.zst
irt-check s2.zst | tail -1
irt-print s2.zst | tail -1
# skippable frames alone hold no trace
cat skip skip0 > s3.zst
irt-print s3.zst; echo "status $?"
