using System.Buffers;
using System.Text;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Actors.Server;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// The connection of an <see cref="InProcessClient"/>: no socket, no parser, no actor. Its client calls
/// the publish pipeline and the subscription table directly, one caller at a time for publishes (the
/// client's queue) and for SUB/UNSUB (the client's lock); every subscription is served by calls
/// (<see cref="IDirectSubscriber"/>), so nothing is ever framed for it.
/// </summary>
internal sealed partial class ClientConnection
{
    /// <summary>Makes and registers an in-process connection in <paramref name="account"/>.</summary>
    internal static ClientConnection InProcess(Broker broker, ulong id, Account account, InProcessRole role)
    {
        var connection = new ClientConnection(broker, Stream.Null, null, id, ActorRefs.Nobody)
        {
            ConnectOptions = new ConnectOptions { Verbose = false, Pedantic = false, Headers = true, Echo = false, Protocol = 1, Name = role.ToString() },
            IsJetStream = role == InProcessRole.JetStream,
            _isMqttCapture = role == InProcessRole.MqttCapture,
            _connectReceived = true,
            _headers = true,
            _echo = false,
            _verbose = false,
            _pedantic = false,
        };
        connection.BindAccount(account);

        // Nothing is framed for it, but should anything be, it is written to nowhere rather than queued for good.
        connection._writePump = connection.RunWritePumpAsync();
        broker.Register(connection);
        return connection;
    }

    /// <summary>SUB of an in-process client: in effect once <see cref="ApplySubscriptionChangesAsync"/> completes.</summary>
    internal void SubscribeInProcess(string subject, string? queue, string sid, IDirectSubscriber direct)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        if (!SubjectRules.IsValidSubject(subjectBytes) || (queue is not null && !IsValidQueue(Encoding.UTF8.GetBytes(queue))))
        {
            Log.InvalidInProcessSubscription(_log, Id, subject);
            return;
        }

        var sub = new Subscription(this, _account, subject, queue, Encoding.UTF8.GetBytes(sid), _account.Space.ShardForSubscription(subjectBytes))
        {
            Direct = direct,
        };
        if (!TryAddSubscription(sub))
        {
            Log.InvalidInProcessSubscription(_log, Id, subject);
        }
    }

    /// <summary>UNSUB of an in-process client.</summary>
    internal void UnsubscribeInProcess(string sid) => ProcessUnsubscribe(Encoding.UTF8.GetBytes(sid), 0);

    /// <summary>Makes the SUB/UNSUB made since the last call in effect in the routers (invariant 2).</summary>
    internal Task ApplySubscriptionChangesAsync() => _pendingChanges.Count == 0 ? Task.CompletedTask : FlushSubscriptionChangesAsync();

    /// <summary>One message of an in-process client through the publish pipeline.</summary>
    internal void PublishInProcess(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> shownSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload) =>
        ProcessPublish(subject, shownSubject, replyTo, headerSize, payload);

    /// <summary>The end of an in-process client's batch: signals each subscriber it reached, once.</summary>
    internal void EndInProcessBatch() => FlushTouched();

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Warning, Message = "cid:{Cid} - in-process subscription to '{Subject}' refused (invalid, or over max_subscriptions)")]
        public static partial void InvalidInProcessSubscription(ILogger logger, ulong cid, string subject);
    }
}
