using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Actors.Server;

namespace Courier.Actors.Events;

/// <summary>
/// The system account's events, as nats-server 2.9 sends them (server/events.go): a client's
/// <c>$SYS.ACCOUNT.&lt;account&gt;.CONNECT</c> and <c>.DISCONNECT</c>, an account's connection count
/// <c>$SYS.ACCOUNT.&lt;account&gt;.SERVER.CONNS</c> when it changes, and the <c>server</c> part of every
/// system-account message. They go out through an in-process client of the system account.
/// </summary>
/// <remarks>
/// Never on the publish path: an event is built only when a client connects or closes, and only
/// when a subscription of the system account matches its subject.
/// </remarks>
internal sealed class SystemEvents : IAsyncDisposable
{
    private const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private const int EventIdLength = 22; // characters, as a nuid

    private readonly SystemEventsContext _context;
    private long _seq;

    /// <param name="context">What the events use of the node.</param>
    /// <param name="system">The system account.</param>
    /// <param name="client">An in-process client of <paramref name="system"/>; the events own it.</param>
    public SystemEvents(SystemEventsContext context, Account system, InProcessClient client)
    {
        _context = context;
        Account = system;
        Client = client;
    }

    /// <summary>The system account.</summary>
    public Account Account { get; }

    /// <summary>The in-process client of the system account that sends the events (and answers its requests).</summary>
    public InProcessClient Client { get; }

    /// <summary>Connects the client and, in operator mode, subscribes to account JWT pushes.</summary>
    public Task StartAsync()
    {
        if (_context.Trust is { } trust)
        {
            foreach (var subject in (string[])[ClaimsUpdates.UpdateSubject, .. ClaimsUpdates.AccountSubjects])
            {
                Client.Subscribe(subject, null, messages =>
                {
                    foreach (var m in messages)
                    {
                        if (ClaimsUpdates.Handle(trust, _context.Accounts, _context.Registry, this, m.Subject, m.Payload) is { } answer && !string.IsNullOrEmpty(m.ReplyTo))
                        {
                            Publish(m.ReplyTo, answer, EventsJsonContext.Default.ClaimsUpdateResponse);
                        }
                    }
                });
            }
        }

        return Client.FlushAsync();
    }

    /// <summary>Whether a subscription of the system account would receive a message on <paramref name="subject"/>.</summary>
    public bool HasInterest(string subject)
    {
        Span<byte> utf8 = stackalloc byte[256]; // bytes: $SYS subjects with an account's public key are under 100
        var length = Encoding.UTF8.GetByteCount(subject);
        var bytes = length <= utf8.Length ? utf8[..length] : new byte[length];
        Encoding.UTF8.GetBytes(subject, bytes);
        return !Account.Space.Match(bytes).IsEmpty;
    }

    /// <summary>The <c>server</c> part of the next system-account message: a new <c>seq</c>, the time now.</summary>
    public EventServer NextServer()
    {
        var o = _context.Options;
        return new EventServer
        {
            Name = _context.ServerName,
            Host = o.Host,
            Id = _context.ServerId,
            Cluster = _context.Routes?.ClusterName is { Length: > 0 } cluster ? cluster : null,
            Domain = string.IsNullOrEmpty(o.JetStreamDomain) ? null : o.JetStreamDomain,
            Version = o.NatsServerVersion,
            Seq = (ulong)Interlocked.Increment(ref _seq),
            JetStream = o.JetStream,
            Time = DateTime.UtcNow,
        };
    }

    /// <summary>A fresh event id (22 characters, as nats-server's nuid).</summary>
    public static string NewEventId() => RandomNumberGenerator.GetString(Alphabet, EventIdLength);

    /// <summary>Publishes <paramref name="value"/> as JSON on <paramref name="subject"/> from the system account.</summary>
    public void Publish<T>(string subject, T value, JsonTypeInfo<T> type) =>
        Client.Publish(subject, null, default, JsonSerializer.SerializeToUtf8Bytes(value, type));

    /// <summary>A client finished its CONNECT (authenticated, bound to its account).</summary>
    public void ClientConnected(Connection client)
    {
        var account = client.Account;
        if (!account.IsGlobal)
        {
            // As nats-server's accountConnectEvent: the global account's clients send none.
            var subject = $"$SYS.ACCOUNT.{account.Name}.CONNECT";
            if (HasInterest(subject))
            {
                var now = DateTime.UtcNow;
                Publish(subject, new ConnectEvent { Id = NewEventId(), Timestamp = now, Server = NextServer(), Client = Describe(client, null) }, EventsJsonContext.Default.ConnectEvent);
            }
        }

        AccountConnectionsChanged(account);
    }

    /// <summary>A client that had connected closed (its reason is set).</summary>
    public void ClientClosed(Connection client)
    {
        var account = client.Account;
        if (!account.IsGlobal)
        {
            var subject = $"$SYS.ACCOUNT.{account.Name}.DISCONNECT";
            if (HasInterest(subject))
            {
                var now = DateTime.UtcNow;
                Publish(subject, new DisconnectEvent
                {
                    Id = NewEventId(),
                    Timestamp = now,
                    Server = NextServer(),
                    Client = Describe(client, now),
                    // From the client's side: what it sent is what the server received from it.
                    Sent = new DataStats { Msgs = client.InMsgs, Bytes = client.InBytes },
                    Received = new DataStats { Msgs = client.Outbound.OutMsgs, Bytes = client.Outbound.OutBytes },
                    Reason = client.CloseReason ?? "Client Closed",
                }, EventsJsonContext.Default.DisconnectEvent);
            }
        }

        AccountConnectionsChanged(account);
    }

    /// <summary>
    /// The account's connection count changed: <c>$SYS.ACCOUNT.&lt;account&gt;.SERVER.CONNS</c> (and the
    /// older <c>$SYS.SERVER.ACCOUNT.&lt;account&gt;.CONNS</c>), as nats-server's accConnsUpdate.
    /// </summary>
    public void AccountConnectionsChanged(Account account)
    {
        var subject = $"$SYS.ACCOUNT.{account.Name}.SERVER.CONNS";
        var old = $"$SYS.SERVER.ACCOUNT.{account.Name}.CONNS";
        var now = HasInterest(subject);
        var before = HasInterest(old);
        if (!now && !before)
        {
            return;
        }

        var message = JsonSerializer.SerializeToUtf8Bytes(AccountConnections(account), EventsJsonContext.Default.AccountConnections);
        if (before)
        {
            Client.Publish(old, null, default, message);
        }

        if (now)
        {
            Client.Publish(subject, null, default, message);
        }
    }

    /// <summary>The account's connections on this server (nats-server's AccountNumConns).</summary>
    public AccountConnections AccountConnections(Account account)
    {
        var tally = AccountTally.Of(_context.Registry.Clients, account);
        return new AccountConnections
        {
            Id = NewEventId(),
            Timestamp = DateTime.UtcNow,
            Server = NextServer(),
            Account = account.Name,
            Connections = tally.Connections,
            LeafNodes = tally.LeafNodes,
            TotalConnections = tally.Connections + tally.LeafNodes,
            Received = new DataStats { Msgs = tally.InMsgs, Bytes = tally.InBytes },
            Sent = new DataStats { Msgs = tally.OutMsgs, Bytes = tally.OutBytes },
        };
    }

    private static EventClient Describe(Connection c, DateTime? stop) => new()
    {
        Start = c.Started,
        Host = c.RemoteIp,
        Id = c.Id,
        Account = c.Account.Name,
        User = c.AuthorizedUser,
        Name = NullIfEmpty(c.ConnectOptions?.Name),
        Lang = NullIfEmpty(c.ConnectOptions?.Lang),
        Version = NullIfEmpty(c.ConnectOptions?.Version),
        Rtt = stop is null ? 0 : c.Rtt.Ticks * 100, // nats-server's connect event goes out before its estimate
        Stop = stop,
        Jwt = NullIfEmpty(c.ConnectOptions?.Jwt),
        ClientType = c.IsMqtt ? ConnectionTypes.Mqtt : c.IsWebSocket ? ConnectionTypes.WebSocket : ConnectionTypes.Nats,
        MqttClient = (c as MqttConnection)?.MqttClientId,
    };

    private static string? NullIfEmpty(string? s) => string.IsNullOrEmpty(s) ? null : s;

    public ValueTask DisposeAsync() => Client.DisposeAsync();
}
