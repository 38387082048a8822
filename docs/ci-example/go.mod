module example.com/ciexample

go 1.22
