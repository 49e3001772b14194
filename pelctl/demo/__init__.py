"""The demo and test scaffolding: a throwaway redis-server (server.py), the incident scenarios
and fast PEL builders (scenario.py), and the RDB time-shifter that back-dates consumers
(timeshift.py). Never used against a production server.
"""
