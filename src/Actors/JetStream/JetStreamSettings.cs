using Courier.Actors.Server;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>What the JetStream actors need from the server's options.</summary>
/// <param name="AccountDirectory">The global account's directory: <c>&lt;store_dir&gt;/jetstream/$G</c>.</param>
/// <param name="StoreDirectory">The JetStream directory reported by /jsz: <c>&lt;store_dir&gt;/jetstream</c>.</param>
/// <param name="Sync">When file streams fsync (<c>sync_interval</c>).</param>
/// <param name="MaxMemoryStore">Bytes memory streams may reserve together; -1: no limit.</param>
/// <param name="MaxFileStore">Bytes file streams may reserve together; -1: no limit.</param>
/// <param name="Limits">The account's own limits (an account of <c>accounts { }</c> with <c>jetstream</c>); null for the global account.</param>
/// <param name="Domain">The JetStream domain (<c>jetstream.domain</c>), or null.</param>
internal sealed record JetStreamSettings(string AccountDirectory, string StoreDirectory, SyncPolicy Sync, long MaxMemoryStore, long MaxFileStore, AccountJetStreamLimits? Limits = null, string? Domain = null)
{
    /// <summary>Called at the account's first JetStream API request (the broker starts its first-use warm-up then); null: nothing.</summary>
    public Action? FirstRequest { get; init; }

    /// <summary>Encryption at rest of the account's streams and consumers (<c>jetstream { key }</c>); null: plaintext.</summary>
    public StoreEncryption? Encryption { get; init; }

    /// <summary>The streams' directory: one folder per stream.</summary>
    public string StreamsDirectory => Path.Combine(AccountDirectory, "streams");

    public static JetStreamSettings From(ServerOptions options) => new(
        options.JetStreamAccountDirectory,
        Path.Combine(options.EffectiveStoreDir, "jetstream"),
        options.JetStreamSync,
        options.MaxMemoryStore,
        options.MaxFileStore,
        Domain: options.JetStreamDomain)
    {
        Encryption = options.JetStreamEncryption,
    };

    /// <summary>An account's JetStream: its streams under <c>&lt;store_dir&gt;/jetstream/&lt;account&gt;</c>, its limits.</summary>
    public static JetStreamSettings ForAccount(ServerOptions options, string account, AccountJetStreamLimits limits) => new(
        Path.Combine(options.EffectiveStoreDir, "jetstream", account),
        Path.Combine(options.EffectiveStoreDir, "jetstream"),
        options.JetStreamSync,
        options.MaxMemoryStore,
        options.MaxFileStore,
        limits,
        options.JetStreamDomain)
    {
        Encryption = options.JetStreamEncryption,
    };
}
