using System.Collections.Frozen;

namespace Courier.Gateway.Configuration;

/// <summary>
/// The keys of one config block that nats-server knows and Courier does not implement, in two kinds:
/// warned (Courier starts without them) and refused (they concern security or durability, so a
/// config that sets them is an error: a user who asked for encryption, pinned certificates or a
/// connection-type restriction must not get a server that silently goes without). Every other key
/// a block does not bind is unknown, nats-server's <c>unknown field "x"</c> error.
/// </summary>
/// <remarks>The table of which key is which kind is in this folder's README.md; keep both in step.</remarks>
internal sealed class UnimplementedKeys
{
    /// <summary>A block where nats-server knows no key Courier lacks.</summary>
    public static readonly UnimplementedKeys None = new([], []);

    private readonly FrozenSet<string> _warned;
    private readonly FrozenSet<string> _refused;

    public UnimplementedKeys(string[] warned, string[] refused)
    {
        _warned = FrozenSet.Create(StringComparer.OrdinalIgnoreCase, warned);
        _refused = FrozenSet.Create(StringComparer.OrdinalIgnoreCase, refused);
    }

    /// <summary>Ignored with a warning.</summary>
    public bool IsWarned(string key) => _warned.Contains(key);

    /// <summary>An error: the key concerns security or durability.</summary>
    public bool IsRefused(string key) => _refused.Contains(key);

    /// <summary>The error for a refused key, naming it.</summary>
    public static string RefusedReason(string key) =>
        $"field \"{key}\" is not implemented by Courier, and as it concerns security or durability a config that sets it is refused";
}
