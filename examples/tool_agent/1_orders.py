# The host's order table, through the host's own function: the cell gets
# the rows it asks for, never the table or the database behind it.
import pandas as pd

orders = pd.DataFrame(query_orders())
emea = pd.DataFrame(query_orders(region="EMEA", month="2025-03"))
print(f"{len(orders)} orders; {len(emea)} in EMEA in 2025-03")
