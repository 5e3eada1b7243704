"""One module per report section; each turns the tables into plain data for its template."""
