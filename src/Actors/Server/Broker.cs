using System.Buffers.Text;
using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Courier.Actors.Connections;
using Courier.Actors.JetStream;
using Courier.Actors.Persistence;
using Courier.Actors.Routing;
using Courier.Actors.Runtime;
using Courier.Protocols.Nats;
using Courier.Storage;
using Courier.Storage.Persistence;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Courier.Actors.Server;

/// <summary>
/// The broker of one node: its actor system, the subject routers and the connection actors.
/// Listeners hand it accepted sockets; monitoring reads its state.
/// </summary>
public sealed class Broker : IAsyncDisposable
{
    /// <summary>Literal router shards (plus one for subscriptions starting with a wildcard).</summary>
    internal const int DefaultLiteralShards = 4;

    /// <summary>The Courier version, reported beside the nats-server version it implements.</summary>
    public static readonly string CourierVersion =
        typeof(Broker).Assembly.GetName().Version?.ToString(3) ?? "0.1.0";

    /// <summary>Closed connections kept for /connz?state=closed (nats-server keeps 10,000).</summary>
    internal const int MaxClosedConnections = 10_000;

    private readonly ConcurrentDictionary<ulong, ClientConnection> _clients = new();
    private readonly ConcurrentQueue<ConnectionInfo> _closed = new();
    private readonly IActorRef[] _routers;
    private readonly IActorRef _connections;
    private readonly ServerInfo _info;
    private readonly IJournalStore? _journal;
    private readonly ISnapshotStore? _snapshots;
    private readonly Timer? _journalSync;
    private byte[]? _infoJson;
    private long _nextClientId;

    public Broker(ServerOptions options, ILoggerFactory? loggerFactory = null, int literalShards = DefaultLiteralShards)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options;
        Logger = (loggerFactory ?? NullLoggerFactory.Instance).CreateLogger("courier");
        ServerId = NewServerId();
        ServerName = string.IsNullOrEmpty(options.ServerName) ? ServerId : options.ServerName;
        Space = new SubjectSpace(literalShards);
        System = ActorSystem.Create("courier");
        System.Failed += failure => Logger.LogError(failure.Cause, "{Failure}", failure.ToString());
        _routers = new IActorRef[Space.ShardCount];
        RouterSupervisorRef = System.ActorOf(RouterSupervisor.Props(this, _routers), "routers");

        // The shard refs are filled in by the supervisor's constructor on an actor thread: wait for
        // it, so no SUB can reach an empty slot (startup only, bounded).
        RouterSupervisorRef.Ask<RouterSupervisor.Protocol.ShardsReady>(RouterSupervisor.Protocol.AwaitShards.Instance, TimeSpan.FromSeconds(30))
            .GetAwaiter().GetResult();
        _connections = System.ActorOf(ConnectionSupervisor.Props(this), "connections");
        if (options.JetStream)
        {
            // Durable consumers are persistent actors: their journal and snapshots live beside the
            // streams, on the same FileStore engine and sync policy.
            var account = options.JetStreamAccountDirectory;
            var journal = FileJournalStore.Open(Path.Combine(account, "journal"), new FileStoreOptions { Sync = options.JetStreamSync });
            _journal = journal;
            if (!options.JetStreamSync.IsAlways)
            {
                // sync_interval: consumer progress is fsynced on the same period as the streams.
                _journalSync = new Timer(_ => SyncJournal(journal), null, options.JetStreamSync.Period, options.JetStreamSync.Period);
            }

            _snapshots = FileSnapshotStore.Open(Path.Combine(account, "snapshots"));
            ConsumerJournalCodec.Register(PersistenceExtension.Register(System, _journal, _snapshots).Serialization);

            // Started before listeners accept clients, and ready (its API subscription in effect,
            // its streams recovered) before this constructor returns: startup only, bounded.
            JetStream = System.ActorOf(JetStreamApi.Props(this), "jetstream");
            JetStream.Ask<JetStreamApi.Protocol.Ready>(JetStreamApi.Protocol.AwaitReady.Instance, TimeSpan.FromSeconds(60))
                .GetAwaiter().GetResult();
        }
        _info = new ServerInfo
        {
            ServerId = ServerId,
            ServerName = ServerName,
            Version = options.NatsServerVersion,
            Proto = 1,
            Go = "courier " + CourierVersion,
            Host = options.Host,
            Port = options.Port,
            Headers = true,
            AuthRequired = options.AuthRequired,
            MaxPayload = options.MaxPayload,
            JetStream = options.JetStream,
        };
    }

    public ServerOptions Options { get; }

    public string ServerId { get; }

    public string ServerName { get; }

    public DateTime Started { get; } = DateTime.UtcNow;

    public ServerStats Stats { get; } = new();

    /// <summary>Client connections open now (Courier's own in-process connections excluded).</summary>
    public int ConnectionCount
    {
        get
        {
            var n = 0;
            foreach (var c in _clients.Values)
            {
                n += c.IsInternal ? 0 : 1;
            }

            return n;
        }
    }

    /// <summary>Subscriptions held now.</summary>
    public int SubscriptionCount => Space.Count;

    internal ILogger Logger { get; }

    internal ActorSystem System { get; }

    internal SubjectSpace Space { get; }

    internal IActorRef RouterSupervisorRef { get; }

    internal IReadOnlyList<IActorRef> Routers => _routers;

    /// <summary>The JetStream API actor, when JetStream is enabled.</summary>
    internal IActorRef? JetStream { get; }

    internal ICollection<ClientConnection> Clients => _clients.Values;

    /// <summary>Sets the port listeners actually bound (for INFO when the configured port was -1).</summary>
    public void SetListenPort(int port)
    {
        _info.Port = port;
        _infoJson = null;
    }

    /// <summary>Takes ownership of an accepted client socket.</summary>
    public void Accept(Socket socket)
    {
        socket.NoDelay = true;
        _connections.Tell(new ConnectionSupervisor.Protocol.Accept(socket));
    }

    /// <summary>The client port actually listened on.</summary>
    public int ListenPort => _info.Port;

    /// <summary>
    /// Opens an in-process client connection: the broker serves it through the same pumps as a
    /// socket. Returns the client's ends: read server frames from the reader, write commands to the writer.
    /// </summary>
    internal (System.IO.Pipelines.PipeReader Input, System.IO.Pipelines.PipeWriter Output) ConnectInternal()
    {
        var (server, input, output) = DuplexPipeStream.CreatePair();
        _connections.Tell(new ConnectionSupervisor.Protocol.AcceptInternal(server));
        return (input, output);
    }

    /// <summary>A snapshot of open (or recently closed) connections for monitoring, by cid.</summary>
    public IReadOnlyList<ConnectionInfo> GetConnections(bool closed = false)
    {
        var list = new List<ConnectionInfo>();
        if (closed)
        {
            list.AddRange(_closed);
        }
        else
        {
            foreach (var c in _clients.Values)
            {
                if (!c.IsInternal)
                {
                    list.Add(Describe(c, subscriptions: c.SubscriptionsSnapshot(), stop: null));
                }
            }
        }

        list.Sort((a, b) => a.Cid.CompareTo(b.Cid));
        return list;
    }

    private static ConnectionInfo Describe(ClientConnection c, Subscription[] subscriptions, DateTime? stop)
    {
        var subjects = new string[subscriptions.Length];
        for (var i = 0; i < subscriptions.Length; i++)
        {
            subjects[i] = subscriptions[i].Subject;
        }

        return new ConnectionInfo(
            c.Id, c.RemoteIp, c.RemotePort, c.Started, c.LastActivity, c.ConnectOptions?.Name, c.ConnectOptions?.Lang,
            c.ConnectOptions?.Version, c.AuthorizedUser, c.InMsgs, c.InBytes, c.Outbound.OutMsgs, c.Outbound.OutBytes,
            c.Outbound.PendingBytes, subjects, stop, stop is null ? null : c.CloseReason);
    }

    /// <summary>JetStream usage for /jsz; null when JetStream is off.</summary>
    public async Task<JetStreamStats?> GetJetStreamStatsAsync()
    {
        if (JetStream is null)
        {
            return null;
        }

        return await JetStream.Ask<JetStreamStats>(JetStreamApi.Protocol.GetStats.Instance, TimeSpan.FromSeconds(10)).ConfigureAwait(false);
    }

    /// <summary>Totals over closed and open connections.</summary>
    public (long InMsgs, long InBytes, long OutMsgs, long OutBytes) GetTotals()
    {
        long inMsgs = Stats.InMsgs, inBytes = Stats.InBytes, outMsgs = Stats.OutMsgs, outBytes = Stats.OutBytes;
        foreach (var c in _clients.Values)
        {
            inMsgs += c.InMsgs;
            inBytes += c.InBytes;
            outMsgs += c.Outbound.OutMsgs;
            outBytes += c.Outbound.OutBytes;
        }

        return (inMsgs, inBytes, outMsgs, outBytes);
    }

    public async ValueTask DisposeAsync()
    {
        await System.Terminate().ConfigureAwait(false);
        if (_journalSync is not null)
        {
            await _journalSync.DisposeAsync().ConfigureAwait(false);
        }

        _journal?.Dispose();
        _snapshots?.Dispose();
    }

    private void SyncJournal(FileJournalStore journal)
    {
        try
        {
            journal.Sync();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            // A timer thread must not throw; the next write reports a broken journal to its actor.
            Logger.LogError(e, "consumer journal sync failed");
        }
    }

    internal ulong NextClientId() => (ulong)Interlocked.Increment(ref _nextClientId);

    internal void Register(ClientConnection client)
    {
        _clients[client.Id] = client;
        Stats.CountConnection();
    }

    internal void Unregister(ClientConnection client, Subscription[] subscriptions)
    {
        if (_clients.TryRemove(client.Id, out _))
        {
            Stats.AddClosed(client.InMsgs, client.InBytes, client.Outbound.OutMsgs, client.Outbound.OutBytes);
            if (!client.IsInternal)
            {
                _closed.Enqueue(Describe(client, subscriptions, DateTime.UtcNow));
            }

            while (_closed.Count > MaxClosedConnections && _closed.TryDequeue(out _))
            {
            }
        }
    }

    /// <summary>
    /// Writes <c>INFO {json}\r\n</c> for one client into <paramref name="destination"/>: the server's
    /// part is serialized once, only client_id and client_ip are added per connection. Returns the
    /// length, or -1 when the destination is too small.
    /// </summary>
    internal int FormatInfo(Span<byte> destination, ulong clientId, string? clientIp)
    {
        var json = _infoJson ??= JsonSerializer.SerializeToUtf8Bytes(_info, NatsJsonContext.Default.ServerInfo);
        var p = 0;
        if (!Append(destination, ref p, "INFO "u8) || !Append(destination, ref p, json.AsSpan(0, json.Length - 1)) ||
            !Append(destination, ref p, ",\"client_id\":"u8) ||
            !Utf8Formatter.TryFormat(clientId, destination[p..], out var written))
        {
            return -1;
        }

        p += written;
        if (!string.IsNullOrEmpty(clientIp))
        {
            if (!Append(destination, ref p, ",\"client_ip\":\""u8) || destination.Length - p < clientIp.Length + 1)
            {
                return -1;
            }

            p += Encoding.ASCII.GetBytes(clientIp, destination[p..]); // an IP address: ASCII, nothing to escape
            destination[p++] = (byte)'"';
        }

        return Append(destination, ref p, "}\r\n"u8) ? p : -1;
    }

    private static bool Append(Span<byte> destination, ref int position, ReadOnlySpan<byte> bytes)
    {
        if (!bytes.TryCopyTo(destination[position..]))
        {
            return false;
        }

        position += bytes.Length;
        return true;
    }

    internal ServerInfo CreateInfo(ClientConnection client) => CreateInfo(client.Id, client.RemoteIp);

    internal ServerInfo CreateInfo(ulong clientId, string? clientIp)
    {
        var info = _info.Clone();
        info.ClientId = clientId;
        info.ClientIp = string.IsNullOrEmpty(clientIp) ? null : clientIp;
        return info;
    }

    /// <summary>Makes a batch of subscription changes effective; completes when every shard involved has published it.</summary>
    internal Task ApplyAsync(IReadOnlyList<SubChange> changes)
    {
        if (changes.Count == 0)
        {
            return Task.CompletedTask;
        }

        var first = changes[0].Sub.Shard;
        var single = true;
        for (var i = 1; i < changes.Count && single; i++)
        {
            single = changes[i].Sub.Shard == first;
        }

        if (single)
        {
            var completion = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _routers[first].Tell(new SubjectRouter.Protocol.Apply(changes, completion));
            return completion.Task;
        }

        var tasks = new List<Task>();
        var seen = new HashSet<int>();
        foreach (var change in changes)
        {
            if (seen.Add(change.Sub.Shard))
            {
                var completion = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                _routers[change.Sub.Shard].Tell(new SubjectRouter.Protocol.Apply(changes, completion));
                tasks.Add(completion.Task);
            }
        }

        return Task.WhenAll(tasks);
    }

    /// <summary>Like <see cref="ApplyAsync"/>, for removals nobody waits on (a closing client, auto-unsubscribe).</summary>
    internal void ApplyWithoutWaiting(IReadOnlyList<SubChange> changes)
    {
        var seen = new HashSet<int>();
        foreach (var change in changes)
        {
            if (seen.Add(change.Sub.Shard))
            {
                _routers[change.Sub.Shard].Tell(new SubjectRouter.Protocol.Apply(changes, null));
            }
        }
    }

    internal AuthResult Authenticate(ConnectOptions connect)
    {
        var o = Options;
        if (!o.AuthRequired)
        {
            return new AuthResult(true, null, null);
        }

        if (o.Users.Count > 0 && connect.User is not null)
        {
            foreach (var user in o.Users)
            {
                if (user.User == connect.User && SecretEquals(user.Password, connect.Pass))
                {
                    return new AuthResult(true, user.User, user.Permissions ?? o.DefaultPermissions);
                }
            }
        }

        if (o.Username is not null && connect.User == o.Username && SecretEquals(o.Password, connect.Pass))
        {
            return new AuthResult(true, o.Username, o.DefaultPermissions);
        }

        if (o.Token is not null && SecretEquals(o.Token, connect.AuthToken))
        {
            return new AuthResult(true, null, o.DefaultPermissions);
        }

        return AuthResult.Denied;
    }

    private static bool SecretEquals(string? expected, string? given) =>
        expected is not null && given is not null &&
        CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(expected), Encoding.UTF8.GetBytes(given));

    private static string NewServerId()
    {
        // nats-server ids are 56 characters of base32 starting with 'N' (a server public nkey).
        const string Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        Span<char> id = stackalloc char[56];
        id[0] = 'N';
        for (var i = 1; i < id.Length; i++)
        {
            id[i] = Alphabet[RandomNumberGenerator.GetInt32(Alphabet.Length)];
        }

        return new string(id);
    }
}

/// <summary>One connection as /connz shows it.</summary>
public sealed record ConnectionInfo(
    ulong Cid,
    string Ip,
    int Port,
    DateTime Start,
    DateTime LastActivity,
    string? Name,
    string? Lang,
    string? Version,
    string? AuthorizedUser,
    long InMsgs,
    long InBytes,
    long OutMsgs,
    long OutBytes,
    long PendingBytes,
    IReadOnlyList<string> Subscriptions,
    DateTime? Stop,
    string? Reason);
