module boxxkite.io/netguard/test/tools/gaigo

go 1.19
