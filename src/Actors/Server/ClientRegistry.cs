using System.Collections.Concurrent;
using Courier.Actors.Connections;
using Courier.Actors.Routing;

namespace Courier.Actors.Server;

/// <summary>
/// The node's open client connections (and the recently closed ones, for <c>/connz?state=closed</c>).
/// Connection actors register and unregister their connection; router shards rebuild from it;
/// monitoring reads it. Thread-safe: every member may be called from any thread.
/// </summary>
internal sealed class ClientRegistry
{
    /// <summary>Closed connections kept for /connz?state=closed (nats-server keeps 10,000).</summary>
    internal const int MaxClosedConnections = 10_000;

    private readonly ConcurrentDictionary<ulong, Connection> _clients = new();
    private readonly ConcurrentQueue<ConnectionInfo> _closed = new();
    private readonly ServerStats _stats;
    private long _nextClientId;

    public ClientRegistry(ServerStats stats) => _stats = stats;

    /// <summary>The open connections, Courier's own in-process ones included.</summary>
    public ICollection<Connection> Clients => _clients.Values;

    /// <summary>Recently closed client connections, oldest first.</summary>
    public IEnumerable<ConnectionInfo> Closed => _closed;

    /// <summary>The next client id (INFO <c>client_id</c>, /connz <c>cid</c>): 1, 2, 3, ...</summary>
    public ulong NextClientId() => (ulong)Interlocked.Increment(ref _nextClientId);

    public void Register(Connection client)
    {
        _clients[client.Id] = client;
        _stats.CountConnection();
    }

    public void Unregister(Connection client, Subscription[] subscriptions)
    {
        if (_clients.TryRemove(client.Id, out _))
        {
            _stats.AddClosed(client.InMsgs, client.InBytes, client.Outbound.OutMsgs, client.Outbound.OutBytes);
            if (!client.IsInternal && !client.IsServerLink)
            {
                _closed.Enqueue(Describe(client, subscriptions, DateTime.UtcNow));
            }

            while (_closed.Count > MaxClosedConnections && _closed.TryDequeue(out _))
            {
            }
        }
    }

    /// <summary>One connection as /connz shows it; <paramref name="stop"/> is null while it is open.</summary>
    public static ConnectionInfo Describe(Connection c, Subscription[] subscriptions, DateTime? stop)
    {
        var details = new SubscriptionInfo[subscriptions.Length];
        for (var i = 0; i < subscriptions.Length; i++)
        {
            // A closed connection's without their auto-unsubscribe limits: nats-server clears them
            // as it tears the connection down, before it records it.
            details[i] = stop is null ? DescribeSubscription(c, subscriptions[i]) : DescribeSubscription(c, subscriptions[i]) with { Max = 0 };
        }

        return new ConnectionInfo(
            c.Id, c.RemoteIp, c.RemotePort, c.Started, c.LastActivity, c.ConnectOptions?.Name, c.ConnectOptions?.Lang,
            c.ConnectOptions?.Version, c.AuthorizedUser, c.InMsgs, c.InBytes, c.Outbound.OutMsgs, c.Outbound.OutBytes,
            c.Outbound.PendingBytes, details, stop, stop is null ? null : c.CloseReason, c.TlsVersion, c.TlsCipherSuiteName,
            c.IsMqtt ? ConnectionTypes.Mqtt : c.IsWebSocket ? ConnectionTypes.WebSocket : ConnectionTypes.Nats, (c as MqttConnection)?.MqttClientId, c.Account.Name, c.Rtt,
            c.ConnectOptions?.User);
    }

    /// <summary>One of <paramref name="c"/>'s subscriptions as monitoring shows it.</summary>
    public static SubscriptionInfo DescribeSubscription(Connection c, Subscription sub) =>
        new(sub.Subject, sub.Queue, sub.SidKey, sub.Delivered, sub.Max, c.Id, c.Account.Name);
}
