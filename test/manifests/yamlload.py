"""YAML for the manifests test: PyYAML's safe loader (Debian python3-yaml),
made strict about the one thing it lets pass and the API server does not:
a key given twice in one mapping (`hostNetwork: true` ... `hostNetwork:
false`), where PyYAML keeps the last silently. kubectl and the API server
read YAML with the same YAML 1.1 rules PyYAML follows (go-yaml v2), so
anchors, flow collections (`drop: ["ALL"]`) and the rest read as they would
there.
"""

import yaml


class YamlError(Exception):
    pass


class _StrictLoader(yaml.SafeLoader):
    pass


def _mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key that is not a scalar", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "in the mapping at", node.start_mark,
                f"duplicate key {key!r} (first at line {seen[key].line + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_all(text, name):
    """Every document of text (None for an empty one); YamlError naming
    name and the line on anything PyYAML refuses or a duplicate key."""
    try:
        return list(yaml.load_all(text, Loader=_StrictLoader))
    except yaml.YAMLError as e:
        raise YamlError(f"{name}: {e}".replace("\n", " ")) from None
