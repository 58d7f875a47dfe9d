import argparse

from django.core.management import load_command_class

from servers.cli import SUBCOMMANDS, subcommands


def test_every_listed_subcommand_module_has_the_interface_the_dispatcher_uses():
    modules = subcommands()
    assert len(modules) == len(SUBCOMMANDS)
    names = [module.NAME for module in modules]
    assert len(set(names)) == len(names)
    for module in modules:
        assert module.HELP and callable(module.handle)
        module.add_arguments(argparse.ArgumentParser())


def test_the_server_command_offers_every_subcommand():
    command = load_command_class("servers", "server")
    parser = command.create_parser("manage.py", "server")
    choices = next(
        action.choices
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    assert set(choices) >= {"import", "export"}
    assert list(choices) == [module.NAME for module in subcommands()]
