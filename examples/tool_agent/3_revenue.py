# Revenue in USD by region and month.
orders = orders.merge(rates, on="currency", validate="many_to_one")
orders["revenue_usd"] = orders.units * orders.unit_price * orders.usd_per_unit
by_month = orders.pivot_table(index="region", columns="month", values="revenue_usd",
                              aggfunc="sum").round(2)
print(by_month.to_string())
print(f"total revenue: {orders.revenue_usd.sum():,.2f} USD")
