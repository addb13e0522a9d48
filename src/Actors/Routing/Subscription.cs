using System.Text;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;

namespace Courier.Actors.Routing;

/// <summary>
/// One client subscription: what it matches, who receives, and its auto-unsubscribe state.
/// Immutable but for the delivery count; identity is the object (the SubList stores references).
/// </summary>
internal sealed class Subscription
{
    private long _delivered;
    private long _max;
    private int _weight = 1;
    private int _countedForRoutes;
    private int _countedForLeafs;
    private int _countedForGateways;

    public Subscription(Connection client, Account account, string subject, string? queue, byte[] sid, int shard)
    {
        Client = client;
        Account = account;
        Subject = subject;
        Queue = queue;
        Sid = sid;
        SidKey = Encoding.UTF8.GetString(sid);
        Shard = shard;
    }

    /// <summary>The subscriber; deliveries go to its outbound buffer.</summary>
    public Connection Client { get; }

    /// <summary>The account whose subject space holds this subscription (a route's subscriptions span accounts).</summary>
    public Account Account { get; }

    public string Subject { get; }

    public string? Queue { get; }

    /// <summary>The sid exactly as the client sent it, written into every MSG.</summary>
    public byte[] Sid { get; }

    public string SidKey { get; }

    /// <summary>The router shard (of <see cref="Account"/>'s space) that holds this subscription.</summary>
    public int Shard { get; }

    /// <summary>An MQTT subscription's granted QoS (0 or 1); 0 for NATS subscriptions.</summary>
    public byte MqttQoS { get; init; }

    /// <summary>
    /// A route's subscription that a peer told with nats-server's LS+ (lnoc): the cluster of the leaf link
    /// it came from there. Never told to a leaf link of that cluster (no echo into it). Null otherwise.
    /// </summary>
    public string? Origin { get; init; }

    /// <summary>
    /// A route's queue subscription: how many members the peer has in the group (RS+ weight), so a
    /// remote group is picked in proportion to its size. 1 for local subscriptions.
    /// </summary>
    public int Weight
    {
        get => Volatile.Read(ref _weight);
        set => Volatile.Write(ref _weight, value);
    }

    /// <summary>Marks the subscription as counted in the node's route interest; true the first time only.</summary>
    public bool MarkCountedForRoutes() => Interlocked.Exchange(ref _countedForRoutes, 1) == 0;

    /// <summary>Clears the mark of <see cref="MarkCountedForRoutes"/>; true when it was set.</summary>
    public bool UnmarkCountedForRoutes() => Interlocked.Exchange(ref _countedForRoutes, 0) == 1;

    /// <summary>Marks the subscription as counted in the node's leaf node interest; true the first time only.</summary>
    public bool MarkCountedForLeafs() => Interlocked.Exchange(ref _countedForLeafs, 1) == 0;

    /// <summary>Clears the mark of <see cref="MarkCountedForLeafs"/>; true when it was set.</summary>
    public bool UnmarkCountedForLeafs() => Interlocked.Exchange(ref _countedForLeafs, 0) == 1;

    /// <summary>Marks the subscription as counted in the node's gateway interest; true the first time only.</summary>
    public bool MarkCountedForGateways() => Interlocked.Exchange(ref _countedForGateways, 1) == 0;

    /// <summary>Clears the mark of <see cref="MarkCountedForGateways"/>; true when it was set.</summary>
    public bool UnmarkCountedForGateways() => Interlocked.Exchange(ref _countedForGateways, 0) == 1;

    /// <summary>
    /// An MQTT subscription at QoS 1/2 of a persistent session: messages published at QoS 1/2 reach
    /// it through its session (journaled first), so this subscription passes them over.
    /// </summary>
    public bool MqttSessionCaptured { get; init; }

    /// <summary>An MQTT 5.0 subscription's No Local option: its own connection's publishes are not delivered to it. [MQTT-3.8.3-3]</summary>
    public bool MqttNoLocal { get; init; }

    /// <summary>An MQTT 5.0 subscription's Retain As Published option: live deliveries keep the publish's RETAIN flag. [MQTT-3.3.1-13]</summary>
    public bool MqttRetainAsPublished { get; init; }

    /// <summary>The subscriber speaks MQTT 5.0: deliveries carry the NATS headers as properties.</summary>
    public bool MqttVersion5 { get; init; }

    /// <summary>An MQTT 5.0 subscription's Subscription Identifier (1..268435455), sent with each delivery; 0 for none. [MQTT-3.8.2.1.2]</summary>
    public int MqttSubscriptionId { get; init; }

    /// <summary>
    /// Null for a plain subscription; else the account import it stands for: a shadow of an
    /// importer's subscription, a service import's request subscription or an exporter's reply one.
    /// </summary>
    public ImportBinding? Import { get; init; }

    /// <summary>An in-process service's subscription served by calls instead of MSG frames (<see cref="IDirectSubscriber"/>); else null.</summary>
    public IDirectSubscriber? Direct { get; init; }

    /// <summary>This subscription's shadows in the spaces of the accounts its account imports streams from.</summary>
    public Subscription[]? Shadows { get; set; }

    /// <summary>Messages delivered so far.</summary>
    public long Delivered => Volatile.Read(ref _delivered);

    /// <summary>Auto-unsubscribe limit (UNSUB with max); 0 means none.</summary>
    public long Max
    {
        get => Volatile.Read(ref _max);
        set => Volatile.Write(ref _max, value);
    }

    /// <summary>
    /// Claims one delivery. Returns 0 to deliver, 1 to deliver and then remove (the limit is
    /// reached), -1 to skip (past the limit). Lock-free: publishers on several connections may race.
    /// </summary>
    public int TryClaimDelivery()
    {
        var max = Max;
        if (max <= 0)
        {
            _delivered++; // Statistics only: a lost increment under a race is harmless.
            return 0;
        }

        var n = Interlocked.Increment(ref _delivered);
        return n < max ? 0 : n == max ? 1 : -1;
    }

    public override string ToString() => Queue is null ? $"{Subject} sid={SidKey}" : $"{Subject} q={Queue} sid={SidKey}";
}
