# golden: release-only
# 10^6 calls deep: depths past 64 in power-of-two buckets; paths up to depth 32
irt-trace testdata/ir/deep.ir deep | irt-stats --top 4
