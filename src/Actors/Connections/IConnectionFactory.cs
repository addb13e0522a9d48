using System.Net.Sockets;
using Akka.Actor;

namespace Courier.Actors.Connections;

/// <summary>
/// What the connection actors need from the node to serve a client: its data path, built around the
/// connection's stream and owned by its actor, and the INFO a rejected client gets before its error.
/// </summary>
internal interface IConnectionFactory
{
    /// <summary>The data path of client <paramref name="id"/> (in-process clients are made by <see cref="InProcessClient"/>, not here).</summary>
    ClientConnection Create(Stream stream, Socket? socket, ulong id, IActorRef owner);

    /// <summary>The data path of MQTT client <paramref name="id"/>.</summary>
    MqttConnection CreateMqtt(Stream stream, Socket socket, ulong id, IActorRef owner);

    /// <summary>The INFO line sent to a client refused at accept (max_connections), before the error.</summary>
    byte[] RejectionInfo(ulong id);
}
