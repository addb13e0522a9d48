using Akka.Actor;

namespace Courier.Actors.Mqtt;

/// <summary>
/// The node's MQTT sessions: one <see cref="MqttSessionActor"/> child per client id, created on the
/// first CONNECT with that id. Connections talk to it once, at CONNECT; never per message.
/// </summary>
internal sealed class MqttSessions : ReceiveActor
{
    private readonly Dictionary<string, IActorRef> _sessions = new(StringComparer.Ordinal);
    private readonly Dictionary<IActorRef, string> _ids = [];
    private long _created;

    public MqttSessions()
    {
        Receive<Protocol.Attach>(attach =>
        {
            if (!_sessions.TryGetValue(attach.ClientId, out var session))
            {
                // Client ids are any UTF-8: actor names are a counter, the map holds the id.
                session = Context.ActorOf(MqttSessionActor.Props(attach.ClientId), $"session-{++_created}");
                Context.Watch(session);
                _sessions.Add(attach.ClientId, session);
                _ids.Add(session, attach.ClientId);
            }

            session.Forward(attach);
        });
        Receive<Terminated>(terminated =>
        {
            if (_ids.Remove(terminated.ActorRef, out var id))
            {
                _sessions.Remove(id);
            }
        });
    }

    public static Props Props() => Akka.Actor.Props.Create(() => new MqttSessions());

    /// <summary>The messages of the session actors.</summary>
    public static class Protocol
    {
        /// <summary>A connection's CONNECT for <see cref="ClientId"/> was accepted: it now holds the session.</summary>
        public sealed class Attach
        {
            public Attach(string clientId, bool cleanSession, IActorRef connection)
            {
                ArgumentNullException.ThrowIfNull(clientId);
                ArgumentNullException.ThrowIfNull(connection);
                ClientId = clientId;
                CleanSession = cleanSession;
                Connection = connection;
            }

            public string ClientId { get; }

            public bool CleanSession { get; }

            /// <summary>The connection's actor: closed if another CONNECT takes the session over.</summary>
            public IActorRef Connection { get; }

            public override string ToString() => $"Attach({ClientId}, clean={CleanSession})";
        }

        /// <summary>The reply to <see cref="Attach"/>: the CONNACK's session present flag.</summary>
        public sealed record Attached(string ClientId, bool SessionPresent);
    }
}
