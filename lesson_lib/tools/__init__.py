"""The fake tools a turn can call: fixed schemas and fixed results, no network.

The constructed captures were built with these tools, so an agent loop that
runs them at replay time sends back exactly the results the captures hold.
"""
