"""Repair operators, replay executors and tool back-ends (the plugins of SPEC §6).

``base`` holds the contracts; ``registry`` the registry that receives them;
``builtin.build_registry`` assembles the built-ins and any third-party plugins found
through entry points.
"""
