package org.flinkagents.ltm.runtime.agent;

import java.io.Serializable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.flink.util.InstantiationUtil;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentDefinitionException;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.RunnerContext;

/**
 * A checked agent: its actions (sorted by name, which fixes the order of the steps a replay
 * reproduces) and which event classes each listens to.
 */
public final class AgentPlan implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Agent agent;
    /** Action name -> the event classes it listens to. Sorted by name. */
    private final LinkedHashMap<String, List<Class<? extends Event>>> listens;
    private transient Map<String, Method> methods;

    private AgentPlan(Agent agent, LinkedHashMap<String, List<Class<? extends Event>>> listens) {
        this.agent = agent;
        this.listens = listens;
    }

    /** Checks {@code agent}; refuses it with a message naming the action and the fix. */
    public static AgentPlan of(Agent agent) {
        if (agent == null) {
            throw new AgentDefinitionException("apply(agent) got null: pass an instance of "
                    + "your Agent subclass");
        }
        Class<?> type = agent.getClass();
        String agentName = type.getSimpleName().isEmpty() ? type.getName() : type.getSimpleName();
        List<Method> annotated = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.isAnnotationPresent(Action.class)) {
                    annotated.add(m);
                }
            }
        }
        annotated.sort(Comparator.comparing(Method::getName));
        LinkedHashMap<String, List<Class<? extends Event>>> listens = new LinkedHashMap<>();
        for (Method m : annotated) {
            String name = agentName + "." + m.getName();
            if (listens.containsKey(m.getName())) {
                throw new AgentDefinitionException("agent " + agentName + " has two actions named '"
                        + m.getName() + "': give each @Action method its own name (the name "
                        + "orders the steps and names the action in errors)");
            }
            List<Class<? extends Event>> events = Arrays.asList(m.getAnnotation(Action.class)
                    .listenEvents());
            if (events.isEmpty()) {
                throw new AgentDefinitionException("action '" + name + "' listens to no event: "
                        + "name them, e.g. @Action(listenEvents = {InputEvent.class})");
            }
            checkSignature(name, m, events);
            listens.put(m.getName(), List.copyOf(events));
        }
        if (listens.values().stream().noneMatch(e -> e.contains(InputEvent.class))) {
            throw new AgentDefinitionException("agent " + agentName + " has no action listening "
                    + "to InputEvent, so its inputs would do nothing: annotate a method with "
                    + "@Action(listenEvents = {InputEvent.class})");
        }
        try {
            InstantiationUtil.serializeObject(agent);
        } catch (Exception e) {
            throw new AgentDefinitionException("agent " + agentName + " cannot be shipped to the "
                    + "job, it does not serialize (" + e + "): make its fields Serializable or "
                    + "transient, and create clients in the actions", e);
        }
        return new AgentPlan(agent, listens);
    }

    private static void checkSignature(String name, Method m, List<Class<? extends Event>> events) {
        String fix = "declare it as public void " + m.getName() + "(Event event, RunnerContext ctx)";
        if (!Modifier.isPublic(m.getModifiers()) || Modifier.isStatic(m.getModifiers())) {
            throw new AgentDefinitionException("action '" + name + "' must be a public instance "
                    + "method: " + fix);
        }
        Class<?>[] params = m.getParameterTypes();
        boolean eventParam = params.length == 2
                && events.stream().allMatch(e -> params[0].isAssignableFrom(e));
        if (!eventParam || params[1] != RunnerContext.class || m.getReturnType() != void.class) {
            throw new AgentDefinitionException("action '" + name + "' must take (Event, "
                    + "RunnerContext) and return void, but takes ("
                    + Arrays.stream(params).map(Class::getSimpleName)
                            .collect(Collectors.joining(", "))
                    + ") and returns " + m.getReturnType().getSimpleName() + ": " + fix);
        }
    }

    public String agentName() {
        Class<?> type = agent.getClass();
        return type.getSimpleName().isEmpty() ? type.getName() : type.getSimpleName();
    }

    Agent agent() {
        return agent;
    }

    /** The actions listening to {@code event}'s class, in step order. */
    List<String> actionsFor(Event event) {
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, List<Class<? extends Event>>> e : listens.entrySet()) {
            if (e.getValue().contains(event.getClass())) {
                names.add(e.getKey());
            }
        }
        return names;
    }

    Method method(String action) {
        if (methods == null) {
            Map<String, Method> found = new HashMap<>();
            for (Class<?> c = agent.getClass(); c != null && c != Object.class;
                    c = c.getSuperclass()) {
                for (Method m : c.getDeclaredMethods()) {
                    if (listens.containsKey(m.getName()) && m.isAnnotationPresent(Action.class)) {
                        m.setAccessible(true);
                        found.putIfAbsent(m.getName(), m);
                    }
                }
            }
            methods = found;
        }
        return methods.get(action);
    }
}
