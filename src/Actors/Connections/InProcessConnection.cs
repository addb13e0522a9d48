using System.Buffers;
using System.Text;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// The connection of one of Courier's own services (an <see cref="InProcessClient"/>, an account's
/// import client): no socket, no parser, no actor. Its client calls the publish pipeline and the
/// subscription table directly, one caller at a time for publishes (the client's queue) and for
/// SUB/UNSUB (the client's lock); every subscription is served by calls (<see cref="IDirectSubscriber"/>),
/// so nothing is ever framed for it.
/// </summary>
internal sealed partial class InProcessConnection : Connection
{
    private readonly InProcessRole _role;

    private InProcessConnection(ConnectionContext node, ulong id, InProcessRole role)
        : base(node, new Transport(Stream.Null, socket: null), id, ActorRefs.Nobody, PublisherKind.Service)
    {
        _role = role;
        ConnectOptions = new ConnectOptions { Verbose = false, Pedantic = false, Headers = true, Echo = false, Protocol = 1, Name = role.ToString() };
        Publisher.Echo = false;
    }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.InProcess;

    /// <summary>Makes and registers an in-process connection in <paramref name="account"/>.</summary>
    internal static InProcessConnection Create(ConnectionContext node, Account account, InProcessRole role)
    {
        var connection = new InProcessConnection(node, node.Registry.NextClientId(), role);
        connection.BindAccount(account);

        // Nothing is framed for it, but should anything be, it is written to nowhere rather than queued for good.
        connection._writePump = connection.RunWritePumpAsync();
        node.Registry.Register(connection);
        return connection;
    }

    /// <summary>Started when made (<see cref="Create"/>): it has no pumps to start.</summary>
    public override void Start()
    {
    }

    /// <summary>Nothing to parse: an in-process client publishes through the pipeline directly.</summary>
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer) => ReadOutcome.Continue;

    /// <summary>A call of the subscription's service: completed with this connection's outbound at the end of the publisher's batch.</summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from)
    {
        var direct = sub.Direct!;
        if (!direct.Deliver(templates.Subject, templates.ReplyTo, templates.HeaderSize, payload, from, out var first))
        {
            return false;
        }

        if (first)
        {
            Outbound.AddDirectPending(direct);
        }

        if (_role == InProcessRole.MqttCapture)
        {
            from.ReachedAckHolder = true; // a persistent session keeps it: the MQTT publisher's PUBACK after its journal write
        }

        return true;
    }

    /// <summary>
    /// Interest told to routes: an account's JetStream's (streams, acks, flow control, cluster
    /// forwarding; not its node-local API subscriptions: requests are forwarded explicitly, see
    /// <see cref="JetStream.JetStreamCluster"/>) and an account's reply subscription for service
    /// exports (responses from other nodes reach it). Other services' interest stays on this node.
    /// </summary>
    internal override bool TellsRoutes(Subscription sub) => _role == InProcessRole.JetStream
        ? !JetStream.JetStreamCluster.IsNodeLocal(sub.Subject)
        : sub.Import is { Kind: ImportKind.ServiceResponse };

    /// <summary>An in-process connection has no actor: its client owns it, so a close is a shutdown.</summary>
    public override void RequestClose(string reason)
    {
        if (!IsClosed)
        {
            Shutdown(reason);
        }
    }

    /// <summary>SUB of an in-process client: in effect once <see cref="Connection.ApplySubscriptionChangesAsync"/> completes.</summary>
    internal void Subscribe(string subject, string? queue, string sid, IDirectSubscriber direct)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        if (!SubjectRules.IsValidSubject(subjectBytes) || (queue is not null && !IsValidQueue(Encoding.UTF8.GetBytes(queue))))
        {
            Log.InvalidSubscription(_log, Id, subject);
            return;
        }

        var account = Account;
        var sub = new Subscription(this, account, subject, queue, Encoding.UTF8.GetBytes(sid), account.Space.ShardForSubscription(subjectBytes))
        {
            Direct = direct,
        };
        if (!TryAddSubscription(sub))
        {
            Log.InvalidSubscription(_log, Id, subject);
        }
    }

    /// <summary>UNSUB of an in-process client.</summary>
    internal void Unsubscribe(string sid) => RemoveSubscription(sid, 0);

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Warning, Message = "cid:{Cid} - in-process subscription to '{Subject}' refused (invalid, or over max_subscriptions)")]
        public static partial void InvalidSubscription(ILogger logger, ulong cid, string subject);
    }
}
