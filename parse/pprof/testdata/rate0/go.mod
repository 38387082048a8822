module rate0
go 1.26
