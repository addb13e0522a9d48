namespace Courier.Actors.Server;

/// <summary>One entry of the <c>accounts { }</c> block (nats-server's parseAccounts).</summary>
public sealed class AccountOptions
{
    public AccountOptions(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Name = name;
    }

    /// <summary>The account's name (the key in <c>accounts { }</c>; in operator mode its public key).</summary>
    public string Name { get; }

    /// <summary>Operator mode: the <c>name</c> of the account's JWT (nats-server's nameTag); null otherwise.</summary>
    public string? NameTag { get; init; }

    /// <summary><c>exports</c>: the streams and services other accounts may import.</summary>
    public List<ExportOptions> Exports { get; } = [];

    /// <summary><c>imports</c>: the streams and services this account takes from others.</summary>
    public List<ImportOptions> Imports { get; } = [];

    /// <summary><c>jetstream</c> inside the account: null when the account has no JetStream.</summary>
    public AccountJetStreamLimits? JetStream { get; set; }

    /// <summary><c>default_permissions</c>: the permissions of the account's users that have none of their own.</summary>
    public Permissions? DefaultPermissions { get; set; }
}

/// <summary>How a service export answers a request (nats-server's ServiceRespType).</summary>
public enum ServiceResponseType
{
    /// <summary><c>single</c>: one reply per request (the default).</summary>
    Singleton,

    /// <summary><c>stream</c>: any number of replies until the response threshold passes.</summary>
    Streamed,

    /// <summary><c>chunked</c>: a reply in several messages.</summary>
    Chunked,
}

/// <summary>
/// An export: <c>{stream: "subject"}</c> or <c>{service: "subject", response_type: ...}</c>, public
/// (<see cref="Accounts"/> null) or for the accounts listed.
/// </summary>
public sealed record ExportOptions(string Subject, bool IsService, ServiceResponseType ResponseType, IReadOnlyList<string>? Accounts);

/// <summary>
/// An import: <c>{stream: {account, subject}, prefix|to}</c> or <c>{service: {account, subject}, to}</c>.
/// <see cref="To"/> is the local subject (a service's defaults to its subject); <see cref="Prefix"/> a
/// stream's local prefix.
/// </summary>
public sealed record ImportOptions(bool IsService, string Account, string Subject, string? To, string? Prefix);

/// <summary>
/// An account's JetStream limits (<c>jetstream: enabled</c> or a block): bytes of memory and file
/// storage, streams and consumers; -1 for no limit.
/// </summary>
public sealed record AccountJetStreamLimits(long MaxMemory = -1, long MaxFile = -1, int MaxStreams = -1, int MaxConsumers = -1, bool MaxBytesRequired = false);
