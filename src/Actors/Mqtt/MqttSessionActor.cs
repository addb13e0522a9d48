using Akka.Actor;

namespace Courier.Actors.Mqtt;

/// <summary>
/// The MQTT session of one client id: which connection holds it now. A CONNECT with a client id
/// already held takes the session over: the previous connection is closed, as nats-server and
/// mosquitto do. A clean session ends with its connection; a persistent one stays for the client
/// to come back to (its subscriptions and in-flight messages are kept from the next stage on).
/// </summary>
internal sealed class MqttSessionActor : ReceiveActor
{
    private readonly string _clientId;
    private IActorRef? _connection;
    private bool _clean = true;

    public MqttSessionActor(string clientId)
    {
        _clientId = clientId;
        Receive<MqttSessions.Protocol.Attach>(attach =>
        {
            if (_connection is not null && !_connection.Equals(attach.Connection))
            {
                Context.Unwatch(_connection);
                _connection.Tell(new Connections.ConnectionActor.Protocol.Close("Duplicate Client ID"));
            }

            _connection = attach.Connection;
            _clean = attach.CleanSession;
            Context.Watch(_connection);
            Sender.Tell(new MqttSessions.Protocol.Attached(_clientId, SessionPresent: false));
        });
        Receive<Terminated>(terminated =>
        {
            if (!terminated.ActorRef.Equals(_connection))
            {
                return;
            }

            _connection = null;
            if (_clean)
            {
                // [MQTT-3.1.2-6]: a clean session lasts as long as its connection.
                Context.Stop(Self);
            }
        });
    }

    public static Props Props(string clientId) => Akka.Actor.Props.Create(() => new MqttSessionActor(clientId));
}
