namespace Courier.Actors.Hosting;

/// <summary>
/// The ready handshake of actors that must recover or subscribe before they serve (the JetStream
/// API, its streams, the MQTT retained store and sessions): ask with <see cref="AwaitReady"/>, and
/// the actor answers <see cref="Ready"/> once it is; each actor says what ready means for it.
/// </summary>
internal static class Readiness
{
    /// <summary>Asks for <see cref="Ready"/>.</summary>
    public sealed class AwaitReady
    {
        public static readonly AwaitReady Instance = new();

        private AwaitReady()
        {
        }

        public override string ToString() => "AwaitReady";
    }

    /// <summary>The actor asked with <see cref="AwaitReady"/> is ready.</summary>
    public sealed class Ready
    {
        public static readonly Ready Instance = new();

        private Ready()
        {
        }

        public override string ToString() => "Ready";
    }
}
