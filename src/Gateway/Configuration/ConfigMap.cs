using System.Diagnostics.CodeAnalysis;

namespace Courier.Gateway.Configuration;

/// <summary>
/// One block of a parsed config file: keys (case-insensitive) in the order they first appear,
/// each with its value and the position of the key. Values are <see cref="string"/>,
/// <see cref="long"/>, <see cref="double"/>, <see cref="bool"/>, <see cref="DateTime"/> (UTC),
/// <see cref="List{T}"/> of values, or a nested <see cref="ConfigMap"/>.
/// </summary>
/// <remarks>A key set twice keeps its first place in the order and takes the later value, as nats-server.</remarks>
internal sealed class ConfigMap : IReadOnlyDictionary<string, object?>
{
    private readonly Dictionary<string, ConfigEntry> _index = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<ConfigEntry> _entries = [];

    /// <summary>The entries in file order.</summary>
    public IReadOnlyList<ConfigEntry> Entries => _entries;

    public int Count => _entries.Count;

    public IEnumerable<string> Keys => _entries.Select(e => e.Key);

    public IEnumerable<object?> Values => _entries.Select(e => e.Value);

    public object? this[string key] =>
        _index.TryGetValue(key, out var entry) ? entry.Value : throw new KeyNotFoundException(key);

    public bool ContainsKey(string key) => _index.ContainsKey(key);

    public bool TryGetValue(string key, [MaybeNullWhen(false)] out object? value)
    {
        if (_index.TryGetValue(key, out var entry))
        {
            value = entry.Value;
            return true;
        }

        value = null;
        return false;
    }

    /// <summary>The entry for <paramref name="key"/>, with its position and variable use.</summary>
    public bool TryGetEntry(string key, [NotNullWhen(true)] out ConfigEntry? entry) => _index.TryGetValue(key, out entry);

    /// <summary>Sets a key (replacing an earlier value) and returns its entry.</summary>
    public ConfigEntry Set(string key, object? value, ConfigPosition position)
    {
        if (_index.TryGetValue(key, out var entry))
        {
            entry.Value = value;
            entry.Position = position;
            return entry;
        }

        entry = new ConfigEntry(key, value, position);
        _index.Add(key, entry);
        _entries.Add(entry);
        return entry;
    }

    public IEnumerator<KeyValuePair<string, object?>> GetEnumerator() =>
        _entries.Select(e => new KeyValuePair<string, object?>(e.Key, e.Value)).GetEnumerator();

    System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
}

/// <summary>A key of a <see cref="ConfigMap"/> with its value and where the key was written.</summary>
internal sealed class ConfigEntry(string key, object? value, ConfigPosition position)
{
    /// <summary>The key as first written.</summary>
    public string Key { get; } = key;

    public object? Value { get; set; } = value;

    /// <summary>Position of the key.</summary>
    public ConfigPosition Position { get; set; } = position;

    /// <summary>
    /// True when a <c>$variable</c> referred to this key. nats-server does not report such keys as
    /// unknown fields: they are definitions for variables, not settings.
    /// </summary>
    public bool IsUsedAsVariable { get; set; }
}
