module example.com/nofree

go 1.19
