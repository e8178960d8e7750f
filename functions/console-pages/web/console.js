// The staff console's entry: the core (sign-in, session, router) and each
// view's module, which registers its view; the first registered is the
// one an empty #fragment shows. No build step: the browser loads these
// modules as they are.
import { start } from "./core.js";
import "./orders.js";
import "./callers.js";
import "./catalogue.js";
import "./webhooks.js";
import "./staff.js";

start();
