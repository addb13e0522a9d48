namespace Courier.Actors.Runtime;

/// <summary>A behaviour: returns true if it handled <paramref name="message"/> (Akka.NET <c>Receive</c>).</summary>
public delegate bool Receive(object message);
