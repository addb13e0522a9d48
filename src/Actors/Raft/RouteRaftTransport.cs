using System.Globalization;
using Akka.Actor;
using Courier.Actors.Connections;

namespace Courier.Actors.Raft;

/// <summary>
/// Raft frames over the route links, nats-server's way: each node's <see cref="RaftHost"/> listens on
/// <c>$NRG.&lt;member id, 16 hex digits&gt;</c> through an in-process client whose interest routes tell
/// every peer, and a frame for a peer is one publish on the peer's subject. One frame carries every
/// group's messages for that peer (the host batches them), so there is no NATS message per Raft message
/// and no actor message per NATS message beyond one per frame.
/// </summary>
internal sealed class RouteRaftTransport : IRaftTransport, IAsyncDisposable
{
    /// <summary>The subjects' prefix (nats-server: <c>$NRG.</c>, its Raft groups' subjects).</summary>
    public const string Prefix = "$NRG.";

    private readonly InProcessClient _client;
    private readonly Dictionary<ulong, string> _subjects = [];
    private readonly Lock _lock = new();

    public RouteRaftTransport(InProcessClient client) => _client = client;

    /// <summary>The subject member <paramref name="id"/> receives its frames on.</summary>
    public static string SubjectOf(ulong id) => Prefix + id.ToString("x16", CultureInfo.InvariantCulture);

    /// <summary>Hands every frame that arrives for <paramref name="self"/> to <paramref name="host"/>.</summary>
    public void Listen(ulong self, IActorRef host) =>
        _client.Subscribe(SubjectOf(self), null, batch =>
        {
            foreach (var message in batch)
            {
                host.Tell(new RaftHost.Protocol.Frame(message.Payload));
            }
        });

    public void Send(ulong peer, ReadOnlyMemory<byte> frame)
    {
        string subject;
        lock (_lock)
        {
            if (!_subjects.TryGetValue(peer, out subject!))
            {
                _subjects[peer] = subject = SubjectOf(peer);
            }
        }

        _client.Publish(subject, null, default, frame.Span);
    }

    public ValueTask DisposeAsync() => _client.DisposeAsync();
}
