module victim

go 1.22
